/**
 * Long-poll support for the queue read: waits until a session's model queue grows past a seq, the
 * deadline passes, or the server shuts down. Fed by the store's commit notifications, so it works
 * the same over every backend.
 */
import type { Store } from './types.js';

interface Waiter {
  after: number;
  wake: () => void;
}

export class QueueWatch {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly unlisten: () => void;
  private closed = false;

  constructor(store: Store) {
    this.unlisten = store.listen({ queue: (session, head) => this.grown(session, head) });
  }

  /** Resolves when the queue of `session` holds an entry after `after`, or after `ms`. */
  waitFor(session: string, after: number, ms: number): Promise<void> {
    if (this.closed || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.waiters.get(session);
      if (!set) this.waiters.set(session, (set = new Set()));
      const waiter: Waiter = {
        after,
        wake: () => {
          clearTimeout(timer);
          set.delete(waiter);
          if (set.size === 0) this.waiters.delete(session);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, ms);
      set.add(waiter);
    });
  }

  /** Releases every waiter (shutdown must not wait out a 60 s long-poll). */
  close(): void {
    this.closed = true;
    this.unlisten();
    for (const set of [...this.waiters.values()]) for (const w of [...set]) w.wake();
  }

  private grown(session: string, head: number): void {
    const set = this.waiters.get(session);
    if (!set) return;
    for (const w of [...set]) if (head > w.after) w.wake();
  }
}
