/**
 * Long-poll support for the queue read: a long-poll opens a watch of its session's model queue
 * *before* it reads the queue, so that no entry committed after that read is missed, and then
 * waits until the queue grows past what it read, the deadline passes, or the server shuts down.
 * Fed by the store's commit notifications (Store.follow: on redis the session's channel is
 * subscribed while a long-poll waits on it), so it works the same over every backend.
 */
import type { Store } from './types.js';

/** One long-poll's view of its session's queue head. */
export interface QueueWait {
  /**
   * Resolves when the queue's head is known to be beyond `after` (at once if a commit since the
   * watch opened said so), when the feed may have missed a commit (then read again), or after `ms`;
   * with false when the server is shutting down (answer now, wait no more).
   */
  grownPast(after: number, ms: number): Promise<boolean>;
  /** Ends the watch (always, once the long-poll is answered). */
  close(): void;
}

class Waiter implements QueueWait {
  /** The highest head a commit announced since the watch opened. */
  private head = 0;
  /** The feed was away: what it announced may not be all (the long-poll reads again). */
  private missed = false;
  /** The server is shutting down. */
  private ended = false;
  /** The head the pending grownPast waits to see passed, and its wake-up. */
  private after = Infinity;
  private wake: (() => void) | undefined;

  constructor(private readonly end: (w: Waiter) => void) {}

  grownPast(after: number, ms: number): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    // What was heard is used up by the read that follows (a deleted session's queue starts again
    // lower: an old head must not wake every later wait).
    if (this.head > after || this.missed || ms <= 0) {
      this.head = 0;
      this.missed = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      this.after = after;
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.after = Infinity;
        this.head = 0;
        this.missed = false;
        resolve(!this.ended);
      };
    });
  }

  /** A commit moved the head to `head`; Infinity: the feed may have missed commits. */
  heard(head: number): void {
    if (head === Infinity) this.missed = true;
    else if (head > this.head) this.head = head;
    if (this.missed || this.head > this.after) this.wake?.();
  }

  /** Shutdown: the pending wait and every later one resolve false. */
  shutDown(): void {
    this.ended = true;
    this.wake?.();
  }

  close(): void {
    this.wake?.();
    this.end(this);
  }
}

export class QueueWatch {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly unlisten: () => void;
  private closed = false;

  constructor(private readonly store: Store) {
    this.unlisten = store.listen({
      queue: (session, head) => this.heard(session, head),
      resync: (session) => this.heard(session, Infinity),
    });
  }

  /**
   * Opens a watch of `session`'s queue; resolves once every later commit reaches it (redis: the
   * session's channel is subscribed), so the read that follows misses nothing. After close()
   * (shutdown) a watch resolves at once and never waits.
   */
  async open(session: string): Promise<QueueWait> {
    if (this.closed) return { grownPast: () => Promise.resolve(false), close: () => undefined };
    let set = this.waiters.get(session);
    if (!set) this.waiters.set(session, (set = new Set()));
    const forget = (w: Waiter): boolean => {
      if (!set.delete(w)) return false;
      if (set.size === 0 && this.waiters.get(session) === set) this.waiters.delete(session);
      return true;
    };
    let followed = false;
    const waiter = new Waiter((w) => {
      if (forget(w) && followed) this.store.unfollow(session);
    });
    // Listening before the follow is confirmed: a commit announced with the confirmation counts.
    set.add(waiter);
    try {
      await this.store.follow(session);
    } catch (err) {
      forget(waiter);
      throw err;
    }
    followed = true;
    if (this.closed) waiter.shutDown();
    return waiter;
  }

  /** Releases every waiter (shutdown must not wait out a 60 s long-poll). */
  close(): void {
    this.closed = true;
    this.unlisten();
    for (const set of this.waiters.values()) for (const w of set) w.shutDown();
  }

  private heard(session: string, head: number): void {
    const set = this.waiters.get(session);
    if (set) for (const w of set) w.heard(head);
  }
}
