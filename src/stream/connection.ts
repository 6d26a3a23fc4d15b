/**
 * One stream connection (docs/protocol.md, "Stream"): its subscriptions, the bounded writer and the
 * replay-then-live rule, over any Transport (a WebSocket, or an SSE response: the same rules hold
 * for both, from this one implementation).
 *
 * Replay then live, with no gap and no duplicate: a subscription is registered with the hub, which
 * follows its session in the store (redis: the session's channel is subscribed), *before* the store
 * is read, so every event committed after that moment is captured in
 * `pending`; the replay reads the store page by page, and when it has caught up, the pending events
 * with a seq beyond the last one sent are flushed and the subscription goes live.
 *
 * Backpressure: a live event that would push the transport's buffered bytes (plus events held back
 * during a replay) over `maxBufferedBytes` closes the connection with 4008 after what is queued.
 * A replay is paced by the transport draining and never by itself causes a 4008.
 *
 * Every message goes out through `write`, which counts it in the connection's telemetry.
 */
import { CLOSE_CODES, type CloseName, type FrameErrorCode } from '../common/errors.js';
import { StoreUnavailableError, type EventPage, type Store } from '../store/types.js';
import { errorFrame, subscribedFrame, unsubscribedFrame, type SubscribedResult, type UnsubscribedReason } from '../wire/frames.js';
import type { StreamTelemetry } from './stream-telemetry.js';
import { Outgoing, type Transport } from './transport.js';

const REPLAY_PAGE = 200;
/** Reads a catch-up tries before giving the client back to its own resume (about 2.5 s in all). */
const CATCH_UP_ATTEMPTS = 4;

/** What the hub keeps of subscriptions: the sessions they watch, to hand them each event. */
export interface SubscriptionRegistry {
  /** Resolves once the subscription hears every later commit of its session (or rejects, unregistered). */
  add(sub: Subscription): Promise<void>;
  remove(sub: Subscription): void;
}

export interface ConnectionLimits {
  maxBufferedBytes: number;
  maxSubscriptions: number;
}

/** Where a subscription starts, and whether that is exactly where the client asked (`recovered`). */
export function resumePoint(page: EventPage, since: number | undefined, epoch: string | undefined): SubscribedResult & { from: number } {
  const { session, head, oldest } = page;
  const sameEpoch = epoch === undefined || epoch === page.epoch;
  const recovered = since === undefined || (sameEpoch && since <= head && (oldest === 0 || since >= oldest - 1));
  // Live only: from the head. Recovered: from `since`. Otherwise everything retained.
  const from = since === undefined ? head : recovered ? since : 0;
  return { session, epoch: page.epoch, head, oldest, recovered, from };
}

/**
 * One session followed by one connection: the state of its replay-then-live rule. The hub hands
 * each event to `connection.deliver(sub, …)`; the subscription itself has no behaviour.
 */
export class Subscription {
  live = false;
  lastSent = 0;
  epoch = '';
  pending: Outgoing[] = [];
  pendingBytes = 0;
  /** Whether the registry holds a follow of the store for it (given back when it is removed). */
  followed = false;

  constructor(
    readonly session: string,
    readonly connection: Connection,
  ) {}
}

export class Connection {
  private readonly subscriptions = new Map<string, Subscription>();
  private closing = false;
  /** The client messages being handled, in order; undefined when none is (an idle connection holds no promise). */
  private work: Promise<void> | undefined;
  /** Set when the server closed it: the close code and reason, which the close log line reports. */
  closedWith: { code: number; reason: string } | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly store: Store,
    private readonly registry: SubscriptionRegistry,
    private readonly limits: ConnectionLimits,
    readonly telemetry: StreamTelemetry,
  ) {}

  /** Client messages are handled one after the other, in the order received. */
  enqueue(task: () => Promise<void>): void {
    const work: Promise<void> = (this.work ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => {
        if (err instanceof StoreUnavailableError) {
          this.sendError('STORE_UNAVAILABLE', 'the store is unreachable; subscribe again shortly');
          return;
        }
        this.sendError('INTERNAL', 'the message could not be handled');
        process.emitWarning(err as Error);
      })
      .then(() => {
        if (this.work === work) this.work = undefined;
      });
    this.work = work;
  }

  /** A protocol message other than a status frame (subscribed, refreshed, …). */
  send(method: string, frame: string): void {
    if (!this.closing) this.write(new Outgoing(method, frame));
  }

  sendError(code: FrameErrorCode, message: string, session?: string): void {
    this.send('error', errorFrame(code, message, session));
  }

  /** The sessions this connection is subscribed to. */
  sessions(): string[] {
    return [...this.subscriptions.keys()];
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  async subscribe(session: string, since: number | undefined, epoch: string | undefined): Promise<void> {
    const existing = this.subscriptions.get(session);
    if (existing) this.drop(existing);
    if (this.subscriptions.size >= this.limits.maxSubscriptions) {
      this.sendError('TOO_MANY_SUBSCRIPTIONS', `at most ${this.limits.maxSubscriptions} sessions per connection`, session);
      return;
    }
    const sub = new Subscription(session, this);
    this.subscriptions.set(session, sub);
    let page: EventPage;
    try {
      // Registered and following before the store is read: nothing committed after the read is missed.
      await this.registry.add(sub);
      if (this.subscriptions.get(session) !== sub) return; // Unsubscribed or closed meanwhile.
      page = await this.store.readEvents(session, since ?? 0, since === undefined ? 0 : REPLAY_PAGE);
    } catch (err) {
      this.drop(sub);
      if (!(err instanceof StoreUnavailableError)) throw err;
      this.sendError('STORE_UNAVAILABLE', 'the store is unreachable; subscribe again shortly', session);
      return;
    }
    const start = resumePoint(page, since, epoch);
    sub.epoch = page.epoch;
    this.telemetry.subscribed(session);
    this.send('subscribed', subscribedFrame(start));
    sub.lastSent = start.from;
    // Live only: nothing to replay. Otherwise the page already read starts at `since`; a replay
    // from elsewhere (the oldest retained, which the subscriber was just told of) reads its own.
    const first = since === undefined ? { ...page, events: [] } : start.from === since ? page : await this.store.readEvents(session, start.from, REPLAY_PAGE);
    await this.goLive(sub, first);
  }

  unsubscribe(session: string): void {
    const sub = this.subscriptions.get(session);
    if (sub) this.drop(sub);
    this.send('unsubscribed', unsubscribedFrame(session));
  }

  /** A committed event of one of this connection's subscriptions, shared by every subscriber. */
  deliver(sub: Subscription, event: Outgoing): void {
    if (this.closing || this.subscriptions.get(sub.session) !== sub) return;
    const seq = event.seq as number;
    const bytes = event.byteLength;
    if (!sub.live) {
      sub.pending.push(event);
      sub.pendingBytes += bytes;
      if (sub.pendingBytes + this.transport.bufferedBytes > this.limits.maxBufferedBytes) this.slowConsumer();
      return;
    }
    // Committed under another incarnation of the log (redis: a flushed or lost key): its seq says
    // nothing about this subscription's, so the store is read, which tells the new epoch.
    const foreign = event.epoch !== undefined && event.epoch !== sub.epoch;
    if (!foreign && seq <= sub.lastSent) return;
    if (foreign || seq !== sub.lastSent + 1) {
      // A gap in the live feed (a lost pub/sub message): hold this event back and read the
      // missing ones from the store first, as a replay does.
      sub.pending.push(event);
      sub.pendingBytes += bytes;
      this.catchUp(sub);
      return;
    }
    if (this.transport.bufferedBytes + bytes > this.limits.maxBufferedBytes) {
      this.slowConsumer();
      return;
    }
    sub.lastSent = seq;
    this.write(event, sub.epoch);
  }

  /**
   * Takes a live subscription back through replay from its last seq, then live again: after a
   * gap in the live feed, an event of another epoch, or when the feed announces it may have missed
   * events (resync) or that the session's log was reset. When the store's log no longer follows on
   * from the last seq sent, the subscriber is told (see `continuation`).
   */
  catchUp(sub: Subscription): void {
    if (this.closing || !sub.live) return;
    sub.live = false;
    this.enqueue(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.goLive(sub, undefined);
          return;
        } catch (err) {
          if (!(err instanceof StoreUnavailableError) || attempt === CATCH_UP_ATTEMPTS) break;
          await new Promise((r) => setTimeout(r, 250 * attempt));
        }
      }
      // The store stays unreachable: the client reconnects and resumes from its seq.
      this.close('GOING_AWAY', 'events could not be delivered in order; resume from your last seq');
    });
  }

  /** Ends a subscription the client did not give up: it is told why. */
  end(sub: Subscription, reason: UnsubscribedReason): void {
    if (this.subscriptions.get(sub.session) !== sub) return;
    this.drop(sub);
    this.send('unsubscribed', unsubscribedFrame(sub.session, reason));
  }

  heartbeat(): void {
    this.transport.heartbeat();
  }

  /** Closes after what is already queued; the transport cuts a peer that does not read it. */
  close(name: CloseName, reason = ''): void {
    if (this.closing) return;
    this.closedWith = { code: CLOSE_CODES[name].code, reason };
    this.dispose();
    this.transport.close(name, reason);
  }

  /** Cuts the peer at once (shutdown, after the close's grace). */
  terminate(): void {
    this.dispose();
    this.transport.terminate();
  }

  /** Stops all delivery to this connection (it is closing or closed). */
  dispose(): void {
    this.closing = true;
    for (const sub of [...this.subscriptions.values()]) this.drop(sub);
  }

  /**
   * Sends the retained events after sub.lastSent (starting with `page` when the caller has read it
   * already), then the live events held back meanwhile, and marks the subscription live.
   */
  private async goLive(sub: Subscription, first: EventPage | undefined): Promise<void> {
    const session = sub.session;
    let page = first ?? (await this.continuation(sub));
    for (;;) {
      for (const e of page.events) {
        if (e.seq <= sub.lastSent) continue;
        await this.paced();
        if (this.closing || this.subscriptions.get(session) !== sub) return;
        this.write(new Outgoing('status', e.frame, session, e.seq), sub.epoch);
        this.telemetry.replayedEvent();
        sub.lastSent = e.seq;
      }
      if (page.events.length < REPLAY_PAGE) break;
      page = await this.store.readEvents(session, sub.lastSent, REPLAY_PAGE);
    }
    if (this.subscriptions.get(session) !== sub) return;
    // Held-back events of another epoch are not this log's: dropped, and once live the store is
    // read again, in case they came from a newer incarnation than the one just replayed.
    let foreign = false;
    for (const p of sub.pending) {
      if (p.epoch !== undefined && p.epoch !== sub.epoch) {
        foreign = true;
        continue;
      }
      if ((p.seq as number) <= sub.lastSent) continue;
      await this.paced();
      if (this.closing || this.subscriptions.get(session) !== sub) return;
      this.write(p, sub.epoch);
      sub.lastSent = p.seq as number;
    }
    sub.pending = [];
    sub.pendingBytes = 0;
    sub.live = true;
    if (foreign) this.catchUp(sub);
  }

  /**
   * The first page after the last seq sent, when the store's log still follows on from it. When it
   * does not (the epoch changed: the log was reset or lost; the seq is beyond the head: the log was
   * restored from an earlier moment; or more than the history was missed while the live feed was
   * away), the subscriber gets a fresh `subscribed` with the store's epoch, head and oldest and
   * `recovered: false`, and the replay starts again at the oldest retained event, exactly as a
   * failed resume does (docs/protocol.md, section 5). Nothing is skipped silently.
   */
  private async continuation(sub: Subscription): Promise<EventPage> {
    const page = await this.store.readEvents(sub.session, sub.lastSent, REPLAY_PAGE);
    const start = resumePoint(page, sub.lastSent, sub.epoch);
    if (start.recovered || this.closing || this.subscriptions.get(sub.session) !== sub) return page;
    sub.epoch = page.epoch;
    sub.lastSent = start.from;
    this.send('subscribed', subscribedFrame(start));
    return this.store.readEvents(sub.session, start.from, REPLAY_PAGE);
  }

  private write(message: Outgoing, epoch?: string): void {
    const bytes = this.transport.send(message, epoch);
    if (bytes > 0) this.telemetry.sent(bytes);
  }

  private slowConsumer(): void {
    if (!this.closing) this.telemetry.slowConsumer();
    this.close('SLOW_CONSUMER', 'slow consumer');
  }

  private drop(sub: Subscription): void {
    this.subscriptions.delete(sub.session);
    this.registry.remove(sub);
  }

  /** Waits while the transport holds more than half the buffer: the replay follows the reader. */
  private async paced(): Promise<void> {
    while (!this.closing && this.transport.open && this.transport.bufferedBytes > this.limits.maxBufferedBytes / 2) {
      await this.transport.drained();
    }
  }
}
