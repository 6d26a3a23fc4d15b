/**
 * The stream layer's one entry and its local fan-out. `open` is how every stream starts, whatever
 * carries it (a WebSocket, an SSE response): it owns the connection's telemetry, its heartbeat and
 * its end; the routes keep only admission (auth, origin, query). `closeAll` ends them all at
 * shutdown.
 *
 * Fan-out: session → subscriptions. Each committed event becomes one Outgoing message whose
 * encodings (one per transport kind) are built once and shared by every subscriber; nothing is
 * stringified or framed per subscriber. Gaps in the live feed (possible only with redis) are each
 * subscription's to fill (Connection.catchUp).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/types.js';
import { Connection, type ConnectionLimits, type Subscription, type SubscriptionRegistry } from './connection.js';
import type { UnsubscribedReason } from '../wire/frames.js';
import type { StreamCensus, StreamTotals } from '../telemetry/metrics.js';
import { STREAM_KINDS, type StreamKind } from '../wire/stream-kinds.js';
import { StreamTelemetry } from './stream-telemetry.js';
import { Outgoing, type Transport } from './transport.js';

/** What a route knows of a stream it admitted. */
export interface StreamOpening {
  kind: StreamKind;
  /** The request's logger: every line about the stream carries its reqId. */
  log: FastifyBaseLogger;
  address: string;
  /** The principal's id, when the request carried a token. */
  principal: string | undefined;
  limits: ConnectionLimits;
}

export class Hub implements SubscriptionRegistry {
  private readonly sessions = new Map<string, Set<Subscription>>();
  private readonly connections = new Set<Connection>();
  private readonly unlisten: () => void;
  private readonly timer: NodeJS.Timeout;
  /** Shutdown waiting for the last connection to end. */
  private readonly allClosed: Array<() => void> = [];

  constructor(
    private readonly store: Store,
    heartbeatMs: number,
    /** Each stream kind's totals, which metrics.ts publishes. */
    private readonly totals: Readonly<Record<StreamKind, StreamTotals>>,
  ) {
    this.unlisten = store.listen({
      events: (events) => {
        for (const e of events) {
          const subs = this.sessions.get(e.session);
          if (!subs) continue;
          const message = new Outgoing('status', e.frame, e.session, e.seq, e.epoch);
          // A delivery may close its connection and remove that subscription: deleting from a Set
          // being iterated is safe, so no copy is made per event.
          for (const sub of subs) sub.connection.deliver(sub, message);
        }
      },
      // A deleted session's subscribers are told, and are no longer subscribed to it.
      deleted: (session) => this.endSession(session, 'deleted'),
      // The session's log started again under a new epoch: its subscriptions re-read it, and
      // each learns of the new incarnation from what it reads (Connection.catchUp).
      reset: (session) => {
        for (const sub of this.sessions.get(session) ?? []) sub.connection.catchUp(sub);
      },
      // The session's live feed was away (redis pub/sub reconnected): its subscriptions re-read
      // from their last seq what they may have missed.
      resync: (session) => {
        for (const sub of this.sessions.get(session) ?? []) sub.connection.catchUp(sub);
      },
    });
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  /**
   * Registers a subscription, then follows its session in the store (redis: subscribes to the
   * session's channel); resolves once every later commit of the session reaches it, so that the
   * store read that follows misses nothing. Rejects with StoreUnavailableError, unregistered, when
   * the store cannot follow.
   */
  async add(sub: Subscription): Promise<void> {
    const { session } = sub;
    let set = this.sessions.get(session);
    if (!set) this.sessions.set(session, (set = new Set()));
    set.add(sub);
    try {
      await this.store.follow(session);
    } catch (err) {
      this.forget(sub);
      throw err;
    }
    // Removed while the follow was being confirmed: given back at once.
    if (this.sessions.get(session)?.has(sub)) sub.followed = true;
    else this.store.unfollow(session);
  }

  remove(sub: Subscription): void {
    this.forget(sub);
    if (sub.followed) {
      sub.followed = false;
      this.store.unfollow(sub.session);
    }
  }

  private forget(sub: Subscription): void {
    const set = this.sessions.get(sub.session);
    if (!set?.delete(sub)) return;
    if (set.size === 0) this.sessions.delete(sub.session);
  }

  /** Ends every subscription of `session` (it was deleted, …); each subscriber is told why. */
  endSession(session: string, reason: UnsubscribedReason): void {
    const subs = this.sessions.get(session);
    if (!subs) return;
    for (const sub of [...subs]) sub.connection.end(sub, reason);
  }

  /**
   * Starts a stream over `transport`: its connection is logged and counted, gets the heartbeat,
   * and is closed at shutdown; when the transport closes, the close is logged with the server's
   * own code when the server closed first (else the peer's) and every subscription ends.
   */
  open(transport: Transport, opening: StreamOpening): Connection {
    const telemetry = new StreamTelemetry(opening.kind, this.totals[opening.kind], opening.log, opening.address, opening.principal);
    const connection = new Connection(transport, this.store, this, opening.limits, telemetry);
    this.connections.add(connection);
    telemetry.opened();
    transport.onClosed((peer) => {
      const closed = connection.closedWith ?? peer;
      telemetry.closed(closed.code, closed.reason);
      connection.dispose();
      this.connections.delete(connection);
      if (this.connections.size === 0) for (const done of this.allClosed.splice(0)) done();
    });
    return connection;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** What is open now, by stream kind (the stream gauges, counted when /metrics is scraped). */
  census(): Record<StreamKind, StreamCensus> {
    const census = Object.fromEntries(STREAM_KINDS.map((k) => [k, { connections: 0, subscriptions: 0 }])) as Record<StreamKind, StreamCensus>;
    for (const c of this.connections) {
      const entry = census[c.telemetry.kind];
      entry.connections++;
      entry.subscriptions += c.subscriptionCount;
    }
    return census;
  }

  /**
   * Shutdown: every client gets 1001 (reconnect elsewhere) and has `graceMs` to finish the closing
   * handshake; then what is left is cut. Resolves once every connection has ended (and been logged).
   */
  async closeAll(graceMs = 2000): Promise<void> {
    clearInterval(this.timer);
    this.unlisten();
    for (const c of this.connections) c.close('GOING_AWAY', 'server going away');
    if (!(await this.whenAllClosed(graceMs))) for (const c of this.connections) c.terminate();
    await this.whenAllClosed(graceMs);
  }

  /** True when every connection ended within `ms`. */
  private whenAllClosed(ms: number): Promise<boolean> {
    if (this.connections.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.allClosed.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private beat(): void {
    for (const c of this.connections) c.heartbeat();
  }
}
