/**
 * The `redis://` backend, for several instances sharing one truth. Every write is one Lua script
 * (redis-scripts.ts) that checks idempotency, assigns the seqs, appends and PUBLISHes the committed
 * event, so concurrent instances never produce a gap, a duplicate or two seqs out of order. The
 * rules around that atomic step (duplicate or conflict, execution time, entry shape) are the
 * Ledger's own pure functions, so this backend cannot drift from sqlite and memory.
 *
 * Faults: commands are not queued while Redis is unreachable and never retried (a write retried
 * after a lost reply could apply twice), so a request fails at once with StoreUnavailableError
 * (503) and a 202 always means Redis acknowledged the script; with `appendfsync always` that
 * means it is on disk. The subscriber connection re-subscribes when Redis is back and then
 * announces `resync`, because messages published while it was away are gone: every stream
 * subscription re-reads what it may have missed.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { statusFrameAround } from '../hub/frames.js';
import { completion, startedCall, startRepeat, systemClock, type CallRecord, type Clock } from './ledger.js';
import { Listeners } from './listeners.js';
import { ACK, APPEND, COMPLETE_CALL, READ_EVENTS, READ_QUEUE, START_CALL } from './redis-scripts.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventPage,
  type EventRecord,
  type QueueEntry,
  type QueuePage,
  type StartCallInput,
  type StartCallOutcome,
  type Store,
  type StoreListener,
  type StoreOptions,
} from './types.js';

const PREFIX = 'horologium';
const CHANNEL = `${PREFIX}:events`;
const DEPTH_KEY = `${PREFIX}:depth`;
/** A call record changed between composing and writing (a concurrent tool-calls): decide again. */
const MAX_RECOMPOSE = 5;

type Reply = Array<string | number>;

interface Scripts {
  hAppend(heads: string, events: string, ...argv: Array<string | number>): Promise<Reply>;
  hStartCall(heads: string, events: string, calls: string, ...argv: Array<string | number>): Promise<Reply>;
  hCompleteCall(heads: string, events: string, calls: string, queue: string, depth: string, ...argv: Array<string | number>): Promise<Reply>;
  hAck(heads: string, depth: string, through: number): Promise<Reply>;
  hReadEvents(heads: string, events: string, after: number, limit: number, history: number, epoch: string): Promise<Reply>;
  hReadQueue(heads: string, queue: string, after: string, limit: number): Promise<Reply>;
}

const keys = (session: string) => {
  const tag = `${PREFIX}:{${session}}`;
  return { heads: `${tag}:heads`, events: `${tag}:events`, queue: `${tag}:queue`, calls: `${tag}:calls` };
};

/** `rest` after the first newline of `text`, and the number before it. */
function numbered(text: string): [number, string] {
  const nl = text.indexOf('\n');
  return [Number(text.slice(0, nl)), text.slice(nl + 1)];
}

export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly redis: Redis & Scripts;
  private readonly subscriber: Redis;
  private readonly listeners = new Listeners();
  private subscribedOnce = false;

  constructor(
    url: string,
    private readonly options: StoreOptions,
    private readonly clock: Clock = systemClock,
  ) {
    const common = {
      lazyConnect: true,
      // Reconnect for ever, at most every 2 s: Redis coming back is the normal end of a fault.
      retryStrategy: (times: number) => Math.min(100 * times, 2000),
    };
    this.redis = new Redis(url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResubscribe: false }) as Redis & Scripts;
    // Re-subscribed by hand (not autoResubscribe) so that `resync` is announced only once the
    // subscription is back: an event published before that is then read from the store.
    this.subscriber = new Redis(url, { ...common, autoResubscribe: false, maxRetriesPerRequest: null });
    this.redis.defineCommand('hAppend', { numberOfKeys: 2, lua: APPEND });
    this.redis.defineCommand('hStartCall', { numberOfKeys: 3, lua: START_CALL });
    this.redis.defineCommand('hCompleteCall', { numberOfKeys: 5, lua: COMPLETE_CALL });
    this.redis.defineCommand('hAck', { numberOfKeys: 2, lua: ACK });
    this.redis.defineCommand('hReadEvents', { numberOfKeys: 2, lua: READ_EVENTS });
    this.redis.defineCommand('hReadQueue', { numberOfKeys: 2, lua: READ_QUEUE });
    // Connection errors are reported through failed commands and /readyz; not as crashes.
    this.redis.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, message: string) => this.received(message));
    this.subscriber.on('ready', () => {
      if (!this.subscribedOnce) return;
      this.subscriber.subscribe(CHANNEL).then(
        () => this.announceResync(),
        () => this.subscriber.disconnect(true),
      );
    });
  }

  async open(): Promise<void> {
    try {
      await this.redis.connect();
      await this.subscriber.connect();
      await this.subscriber.subscribe(CHANNEL);
      this.subscribedOnce = true;
    } catch (err) {
      this.redis.disconnect();
      this.subscriber.disconnect();
      throw new Error(`HOROLOGIUM_STORE: cannot reach Redis: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => undefined);
    this.redis.disconnect();
  }

  async isReady(): Promise<boolean> {
    if (this.redis.status !== 'ready') return false;
    return this.redis.ping().then(
      (r) => r === 'PONG',
      () => false,
    );
  }

  async appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord> {
    const k = keys(session);
    const [before, after] = statusFrameAround(type, dataJson, this.clock(), randomUUID(), session);
    const [seq] = await this.call(() => this.redis.hAppend(k.heads, k.events, before, after, this.options.historySize, randomUUID(), CHANNEL, session, type));
    return { session, seq: Number(seq), type, frame: before + seq + after };
  }

  async startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    const k = keys(session);
    const now = this.clock();
    const [before, after] = statusFrameAround('tool_starting', input.data, now, randomUUID(), session);
    const record = JSON.stringify({ started: startedCall(input, now) });
    const recordPrefix = `${record.slice(0, -2)},"eventSeq":`;
    const reply = await this.call(() =>
      this.redis.hStartCall(k.heads, k.events, k.calls, input.callId, before, after, recordPrefix, this.options.historySize, randomUUID(), CHANNEL, session),
    );
    if (reply[0] === 'exists') {
      return startRepeat(JSON.parse(String(reply[1])) as CallRecord, input) ?? { status: 'conflict', message: 'this call_id already has a record' };
    }
    const seq = Number(reply[1]);
    return { status: 'created', eventSeq: seq, event: { session, seq, type: 'tool_starting', frame: before + seq + after } };
  }

  async completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    const k = keys(session);
    // Optimistic: compose for "no earlier record" (one round trip); the script refuses when the
    // record is another, and the write is decided again from the record it returned.
    let expected = '';
    for (let attempt = 0; attempt < MAX_RECOMPOSE; attempt++) {
      const record = expected === '' ? {} : (JSON.parse(expected) as CallRecord);
      const now = this.clock();
      const decided = completion(record, input, now);
      if ('repeat' in decided) return decided.repeat;
      const [before, after] = statusFrameAround('tool_completed', decided.data, now, randomUUID(), session);
      const entry = JSON.stringify(decided.entry);
      const base = JSON.stringify({ ...record, completed: { fingerprint: input.fingerprint } });
      const recordPrefix = `${base.slice(0, -2)},"queueSeq":`;
      const reply = await this.call(() =>
        this.redis.hCompleteCall(k.heads, k.events, k.calls, k.queue, DEPTH_KEY, input.callId, expected, entry, before, after, recordPrefix, this.options.historySize, randomUUID(), CHANNEL, session),
      );
      if (reply[0] === 'changed') {
        expected = String(reply[1]);
        continue;
      }
      const queueSeq = Number(reply[1]);
      const seq = Number(reply[2]);
      return { status: 'created', queueSeq, eventSeq: seq, event: { session, seq, type: 'tool_completed', frame: before + seq + after } };
    }
    throw new StoreUnavailableError('the call record kept changing under this write; retry');
  }

  async ack(session: string, through: number): Promise<AckOutcome> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hAck(k.heads, DEPTH_KEY, through));
    return reply[0] === 'beyond' ? { status: 'beyond_head', head: Number(reply[1]) } : { status: 'ok', committed: Number(reply[1]) };
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hReadEvents(k.heads, k.events, after, limit, this.options.historySize, randomUUID()));
    const events = reply.slice(3).map((item) => {
      const [seq, rest] = numbered(String(item));
      const nl = rest.indexOf('\n');
      return { session, seq, type: rest.slice(0, nl), frame: rest.slice(nl + 1) };
    });
    return { session, epoch: String(reply[0]), head: Number(reply[1]), oldest: Number(reply[2]), events };
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hReadQueue(k.heads, k.queue, after === undefined ? '' : String(after), limit));
    const entries = reply.slice(2).map((item): QueueEntry => {
      const [queueSeq, json] = numbered(String(item));
      return { queueSeq, ...(JSON.parse(json) as Omit<QueueEntry, 'queueSeq'>) };
    });
    return { session, committed: Number(reply[0]), head: Number(reply[1]), entries };
  }

  async queueDepth(): Promise<number> {
    return Number((await this.call(() => this.redis.get(DEPTH_KEY))) ?? 0);
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * The two connections come back at their own pace: the subscriptions re-read through the
   * command connection, so `resync` waits until that one is ready too.
   */
  private announceResync(): void {
    if (this.redis.status === 'ready') this.listeners.resync();
    else this.redis.once('ready', () => this.listeners.resync());
  }

  /** Runs a command; any failure to reach Redis is the store being unavailable (503). */
  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    }
  }

  private received(message: string): void {
    const kind = message.slice(0, 2);
    const parts: string[] = [];
    let at = 2;
    const fields = kind === 'e\n' ? 3 : 1;
    for (let f = 0; f < fields; f++) {
      const nl = message.indexOf('\n', at);
      if (nl < 0) break;
      parts.push(message.slice(at, nl));
      at = nl + 1;
    }
    if (kind === 'e\n' && parts.length === 3) {
      const [session, seq, type] = parts as [string, string, string];
      this.listeners.events([{ session, seq: Number(seq), type, frame: message.slice(at) }]);
    } else if (kind === 'q\n' && parts.length === 1) {
      this.listeners.queue(parts[0] as string, Number(message.slice(at)));
    }
  }
}
