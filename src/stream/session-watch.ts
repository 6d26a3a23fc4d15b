/**
 * The stream's view of the sessions list (docs/protocol.md section 9, `watch_sessions`): a watching
 * connection gets `{"method":"session","result":summary}` whenever a session it may see (its token
 * covers it, and it matches the watch's prefix) is created, gets an event, or is deleted (then
 * `{"session","deleted":true}`), at most once a second per connection and session: a change inside
 * that second is sent at its end, with the state of that moment. Fed by the store's `changed`
 * notifications, which it follows while it has a watcher (Store.followSessions), so on Redis a
 * watcher hears of every instance's writes and an instance with no watcher hears of none.
 */
import type { Store, SessionSummary } from '../store/types.js';
import { sessionFrame } from '../wire/frames.js';
import { sessionSummaryJson } from '../wire/sessions.js';
import type { Connection } from './connection.js';

const THROTTLE_MS = 1000;
/** Past this many remembered sends, a watcher forgets those older than the throttle window. */
const PRUNE_AT = 10_000;

export interface WatchFilter {
  prefix?: string;
  /** Whether the connection's token (as it is now: a refresh may narrow it) covers a session. */
  covers: (session: string) => boolean;
}

interface Watcher {
  connection: Connection;
  filter: WatchFilter;
  lastSent: Map<string, number>;
  due: Map<string, NodeJS.Timeout>;
  /** Whether it holds a Store.followSessions (given back when it ends). */
  followed: boolean;
}

export class SessionWatch {
  private readonly watchers = new Map<Connection, Watcher>();
  private readonly unlisten: () => void;

  constructor(private readonly store: Store) {
    this.unlisten = store.listen({
      changed: (session) => {
        if (this.watchers.size > 0) this.changed(session);
      },
    });
  }

  /**
   * Starts (or replaces) the watch of a connection; resolves once the store's changes reach it, or
   * rejects (StoreUnavailableError, not watching) when the store cannot say.
   */
  async watch(connection: Connection, filter: WatchFilter): Promise<void> {
    this.unwatch(connection);
    const w: Watcher = { connection, filter, lastSent: new Map(), due: new Map(), followed: false };
    this.watchers.set(connection, w);
    try {
      await this.store.followSessions();
    } catch (err) {
      if (this.watchers.get(connection) === w) this.watchers.delete(connection);
      throw err;
    }
    // Ended while the follow was being confirmed: given back at once.
    if (this.watchers.get(connection) === w) w.followed = true;
    else this.store.unfollowSessions();
  }

  unwatch(connection: Connection): void {
    const w = this.watchers.get(connection);
    if (!w) return;
    for (const timer of w.due.values()) clearTimeout(timer);
    this.watchers.delete(connection);
    if (w.followed) this.store.unfollowSessions();
  }

  close(): void {
    this.unlisten();
    for (const connection of [...this.watchers.keys()]) this.unwatch(connection);
  }

  private changed(session: string): void {
    const now = Date.now();
    for (const w of this.watchers.values()) {
      const { prefix, covers } = w.filter;
      if ((prefix !== undefined && !session.startsWith(prefix)) || !covers(session) || w.due.has(session)) continue;
      const wait = (w.lastSent.get(session) ?? -Infinity) + THROTTLE_MS - now;
      if (wait <= 0) {
        this.send(w, session, now);
        continue;
      }
      const timer = setTimeout(() => {
        w.due.delete(session);
        if (this.watchers.get(w.connection) === w) this.send(w, session, Date.now());
      }, wait);
      timer.unref();
      w.due.set(session, timer);
    }
  }

  private send(w: Watcher, session: string, now: number): void {
    w.lastSent.set(session, now);
    if (w.lastSent.size > PRUNE_AT) for (const [s, at] of w.lastSent) if (now - at >= THROTTLE_MS) w.lastSent.delete(s);
    this.store.sessionSummary(session).then(
      (summary: SessionSummary | undefined) => {
        // The token may have been narrowed by a refresh since the change.
        if (this.watchers.get(w.connection) !== w || !w.filter.covers(session)) return;
        w.connection.send('session', sessionFrame(summary ? sessionSummaryJson(summary) : { session, deleted: true }));
      },
      () => undefined, // An unreachable store: the next change sends the state again.
    );
  }
}
