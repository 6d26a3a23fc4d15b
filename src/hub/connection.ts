/**
 * One WebSocket connection of the stream (CONTRACT.md section 5): its subscriptions, the bounded
 * writer and the replay-then-live rule.
 *
 * Replay then live, with no gap and no duplicate: a subscription is registered with the hub
 * *before* the store is read, so every event committed after that moment is captured in
 * `pending`; the replay reads the store page by page, and when it has caught up, the pending events
 * with a seq beyond the last one sent are flushed and the subscription goes live.
 *
 * Backpressure: a live event that would push the socket's buffered bytes (plus events held back
 * during a replay) over `maxBufferedBytes` closes the connection with 4008 after what is queued.
 * A replay is paced by the socket draining and never by itself causes a 4008.
 */
import type { WebSocket } from 'ws';
import { StoreUnavailableError, type EventPage, type Store } from '../store/types.js';
import { errorFrame, subscribedFrame, unsubscribedFrame } from './frames.js';
import { rawSocket } from './ws-frame.js';

export const CLOSE = { GOING_AWAY: 1001, UNSUPPORTED: 1003, TOO_LARGE: 1009, UNAUTHORIZED: 4001, FORBIDDEN: 4003, SLOW_CONSUMER: 4008 } as const;
const REPLAY_PAGE = 200;
/** Reads a catch-up tries before giving the client back to its own resume (about 2.5 s in all). */
const CATCH_UP_ATTEMPTS = 4;
/** A peer that does not read the 4008 close frame within this is cut. */
const CLOSE_GRACE_MS = 30_000;

export interface Subscription {
  session: string;
  connection: Connection;
  live: boolean;
  lastSent: number;
  pending: Array<{ seq: number; bytes: Buffer }>;
  pendingBytes: number;
}

export interface SubscriptionRegistry {
  add(sub: Subscription): void;
  remove(sub: Subscription): void;
}

export class Connection {
  readonly subscriptions = new Map<string, Subscription>();
  lastPong = Date.now();
  private closing = false;
  private work: Promise<void> = Promise.resolve();

  constructor(
    readonly ws: WebSocket,
    private readonly store: Store,
    private readonly registry: SubscriptionRegistry,
    private readonly limits: { maxBufferedBytes: number; maxSubscriptions: number },
  ) {}

  /** Client messages are handled one after the other, in the order received. */
  enqueue(task: () => Promise<void>): void {
    this.work = this.work.then(task).catch((err: unknown) => {
      if (err instanceof StoreUnavailableError) {
        this.sendText(errorFrame('STORE_UNAVAILABLE', 'the store is unreachable; subscribe again shortly'));
        return;
      }
      this.sendText(errorFrame('INTERNAL', 'the message could not be handled'));
      process.emitWarning(err as Error);
    });
  }

  sendText(text: string): void {
    if (!this.closing && this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  /**
   * A live event for one of this connection's subscriptions: `bytes` is the frame text, `frame`
   * the complete WebSocket frame of it, the same for every subscriber.
   */
  deliver(sub: Subscription, seq: number, bytes: Buffer, frame: Buffer): void {
    if (this.closing) return;
    if (!sub.live) {
      sub.pending.push({ seq, bytes });
      sub.pendingBytes += bytes.length;
      if (sub.pendingBytes + this.ws.bufferedAmount > this.limits.maxBufferedBytes) this.slowConsumer();
      return;
    }
    if (seq <= sub.lastSent) return;
    if (seq !== sub.lastSent + 1) {
      // A gap in the live feed (a lost pub/sub message): hold this event back and read the
      // missing ones from the store first, as a replay does.
      sub.pending.push({ seq, bytes });
      sub.pendingBytes += bytes.length;
      this.catchUp(sub);
      return;
    }
    if (this.ws.bufferedAmount + bytes.length > this.limits.maxBufferedBytes) {
      this.slowConsumer();
      return;
    }
    sub.lastSent = seq;
    const socket = rawSocket(this.ws);
    if (socket && this.ws.readyState === this.ws.OPEN) socket.write(frame);
  }

  async subscribe(session: string, since: number | undefined, epoch: string | undefined): Promise<void> {
    const existing = this.subscriptions.get(session);
    if (existing) this.drop(existing);
    if (this.subscriptions.size >= this.limits.maxSubscriptions) {
      this.sendText(errorFrame('TOO_MANY_SUBSCRIPTIONS', `at most ${this.limits.maxSubscriptions} sessions per connection`));
      return;
    }
    const sub: Subscription = { session, connection: this, live: false, lastSent: 0, pending: [], pendingBytes: 0 };
    this.subscriptions.set(session, sub);
    this.registry.add(sub);
    let page: EventPage;
    try {
      page = await this.store.readEvents(session, since ?? 0, since === undefined ? 0 : REPLAY_PAGE);
    } catch (err) {
      this.drop(sub);
      throw err;
    }
    const sameEpoch = epoch === undefined || epoch === page.epoch;
    const recovered = since === undefined || (sameEpoch && since <= page.head && (page.oldest === 0 || since >= page.oldest - 1));
    this.sendText(subscribedFrame(session, page.epoch, page.head, page.oldest, recovered));
    if (since === undefined) {
      sub.lastSent = page.head;
      await this.goLive(sub, { ...page, events: [] });
    } else if (recovered) {
      sub.lastSent = since;
      await this.goLive(sub, page);
    } else {
      // Not recoverable: everything retained, from the oldest.
      await this.goLive(sub, since === 0 ? page : undefined);
    }
  }

  /**
   * Takes a live subscription back through replay from its last seq, then live again: after a
   * gap in the live feed, or when the feed announces it may have missed events (resync).
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
      this.close(CLOSE.GOING_AWAY, 'events could not be delivered in order; resume from your last seq');
    });
  }

  /**
   * Sends the retained events after sub.lastSent (starting with `page` when the caller has read it
   * already), then the live events held back meanwhile, and marks the subscription live.
   */
  private async goLive(sub: Subscription, first: EventPage | undefined): Promise<void> {
    const session = sub.session;
    let page = first ?? (await this.store.readEvents(session, sub.lastSent, REPLAY_PAGE));
    for (;;) {
      for (const e of page.events) {
        if (this.closing || this.subscriptions.get(session) !== sub) return;
        if (e.seq <= sub.lastSent) continue;
        await this.paced();
        this.ws.send(e.frame);
        sub.lastSent = e.seq;
      }
      if (page.events.length < REPLAY_PAGE) break;
      page = await this.store.readEvents(session, sub.lastSent, REPLAY_PAGE);
    }
    if (this.subscriptions.get(session) !== sub) return;
    for (const p of sub.pending) {
      if (p.seq > sub.lastSent) {
        await this.paced();
        this.ws.send(p.bytes, { binary: false });
        sub.lastSent = p.seq;
      }
    }
    sub.pending = [];
    sub.pendingBytes = 0;
    sub.live = true;
  }

  unsubscribe(session: string): void {
    const sub = this.subscriptions.get(session);
    if (sub) this.drop(sub);
    this.sendText(unsubscribedFrame(session));
  }

  /** Closes with `code` after what is already queued; cuts a peer that does not read it. */
  close(code: number, reason = ''): void {
    if (this.closing) return;
    this.dispose();
    // A close reason is at most 123 bytes (RFC 6455 5.5); ours are short, this keeps them so.
    this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString().replace(/\uFFFD$/, ''));
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** Stops all delivery to this connection (it is closing or closed). */
  dispose(): void {
    this.closing = true;
    for (const sub of [...this.subscriptions.values()]) this.drop(sub);
  }

  private slowConsumer(): void {
    this.close(CLOSE.SLOW_CONSUMER, 'slow consumer');
  }

  private drop(sub: Subscription): void {
    this.subscriptions.delete(sub.session);
    this.registry.remove(sub);
  }

  /** Waits while the socket holds more than half the buffer: the replay follows the reader. */
  private async paced(): Promise<void> {
    const socket = rawSocket(this.ws);
    while (!this.closing && socket && this.ws.bufferedAmount > this.limits.maxBufferedBytes / 2) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}
