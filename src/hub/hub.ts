/**
 * Local fan-out: session → subscriptions. Each committed event is turned into one complete
 * WebSocket frame and the same bytes are written to every subscriber's socket; nothing is
 * stringified or framed per subscriber. Gaps in the
 * live feed (possible only with redis) are each subscription's to fill: see Connection.catchUp. Also runs the
 * heartbeat: a 💓 text frame and a protocol ping every interval, and drops a peer whose last pong
 * is older than two intervals.
 */
import type { Store } from '../store/types.js';
import { CLOSE, type Connection, type Subscription, type SubscriptionRegistry } from './connection.js';
import { HEARTBEAT } from './frames.js';
import { textFrame } from './ws-frame.js';

export class Hub implements SubscriptionRegistry {
  private readonly sessions = new Map<string, Set<Subscription>>();
  readonly connections = new Set<Connection>();
  private readonly unlisten: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(store: Store, private readonly heartbeatMs: number) {
    this.unlisten = store.listen({
      events: (events) => {
        for (const e of events) {
          const subs = this.sessions.get(e.session);
          if (!subs) continue;
          const bytes = Buffer.from(e.frame);
          const frame = textFrame(bytes);
          // A delivery may close its connection and remove that subscription: deleting from a Set
          // being iterated is safe, so no copy is made per event.
          for (const sub of subs) sub.connection.deliver(sub, e.seq, bytes, frame);
        }
      },
      // The live feed was away (redis pub/sub reconnected): every subscription re-reads from its
      // last seq what it may have missed.
      resync: () => {
        for (const subs of this.sessions.values()) for (const sub of subs) sub.connection.catchUp(sub);
      },
    });
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  add(sub: Subscription): void {
    let set = this.sessions.get(sub.session);
    if (!set) this.sessions.set(sub.session, (set = new Set()));
    set.add(sub);
  }

  remove(sub: Subscription): void {
    const set = this.sessions.get(sub.session);
    if (!set) return;
    set.delete(sub);
    if (set.size === 0) this.sessions.delete(sub.session);
  }

  /** Shutdown: every client gets 1001 (reconnect elsewhere). */
  closeAll(): void {
    clearInterval(this.timer);
    this.unlisten();
    for (const c of this.connections) c.close(CLOSE.GOING_AWAY, 'server going away');
  }

  private beat(): void {
    const now = Date.now();
    for (const c of this.connections) {
      if (now - c.lastPong > 2 * this.heartbeatMs) {
        c.dispose();
        c.ws.terminate();
        continue;
      }
      c.sendText(HEARTBEAT);
      c.ws.ping();
    }
  }
}
