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
import { composeEvent, composeToolStarting, frameOf, type ComposedEvent } from '../wire/event-composer.js';
import { completion, eventKeyRecord, keyedEventRepeat, stampOf, startedCall, startRepeat, systemClock, type CallRecord, type Clock } from './ledger.js';
import { Listeners } from './listeners.js';
import { DurabilityCheck } from './redis-durability.js';
import { SCRIPTS } from './redis-scripts.js';
import { decodeCursor, encodeCursor } from './session-cursor.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventKey,
  type KeyedEventOutcome,
  type EventPage,
  type EventRecord,
  type QueueEntry,
  type QueuePage,
  type SessionList,
  type SessionListQuery,
  type SessionSummary,
  type StartCallInput,
  type StoreWarning,
  type SweepPolicy,
  type SweepResult,
  type StartCallOutcome,
  type Store,
  type StoreListener,
  type StoreOptions,
} from './types.js';

const PREFIX = 'horologium';
const CHANNEL = `${PREFIX}:events`;
const DEPTH_KEY = `${PREFIX}:depth`;
const INDEX_KEY = `${PREFIX}:sessions`;
/** A call record changed between composing and writing (a concurrent tool-calls): decide again. */
const MAX_RECOMPOSE = 5;

type Reply = Array<string | number | null>;
type Arg = string | number;

type Scripts = { [K in keyof typeof SCRIPTS]: (...keysAndArgs: Arg[]) => Promise<Reply> };

const keys = (session: string) => {
  const tag = `${PREFIX}:{${session}}`;
  return { heads: `${tag}:heads`, events: `${tag}:events`, queue: `${tag}:queue`, calls: `${tag}:calls` };
};

/** The started call as the scripts keep it: everything but its event seq, as JSON built whole. */
type StartedFields = Omit<NonNullable<CallRecord['started']>, 'eventSeq'>;

/** A call record from its hash fields (lua/lib.lua: s, se, c, cq, ce), as a script returned them. */
function callRecord(fields: Reply): CallRecord {
  const [s, se, c, cq, ce] = fields;
  const record: CallRecord = {};
  if (typeof s === 'string') record.started = { ...(JSON.parse(s) as StartedFields), eventSeq: Number(se) };
  if (typeof c === 'string') record.completed = { fingerprint: c, queueSeq: Number(cq), eventSeq: Number(ce) };
  return record;
}

/** An events-hash item ("<type>\n<frame head>") of a seq, as an EventRecord. */
function eventRecord(session: string, seq: number, item: string): EventRecord {
  const nl = item.indexOf('\n');
  return { session, seq, type: item.slice(0, nl), frame: frameOf(item.slice(nl + 1), seq) };
}

/** The record of a composed event once the script gave it its seq. */
function committed(session: string, seq: number, composed: ComposedEvent): EventRecord {
  return { session, seq, type: composed.type, frame: frameOf(composed.head, seq) };
}

/** The [seq, value] pairs after the first `skip` items of a script's reply. */
function pairs(reply: Reply, skip: number): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let k = skip; k + 1 < reply.length; k += 2) out.push([Number(reply[k]), String(reply[k + 1])]);
  return out;
}

export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly redis: Redis & Scripts;
  private readonly subscriber: Redis;
  private readonly listeners = new Listeners();
  private subscribedOnce = false;
  private readonly durability: DurabilityCheck;

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
    for (const [name, script] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, script);
    this.durability = new DurabilityCheck(this.redis);
    // Connection errors are reported through failed commands, /readyz and the trouble metrics;
    // not as crashes.
    this.redis.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    for (const connection of [this.redis, this.subscriber]) connection.on('reconnecting', () => this.options.telemetry?.trouble('reconnect'));
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

  /** What Redis's settings mean for durability (redis-durability.ts): logged at start-up, shown by /readyz. */
  async warnings(): Promise<readonly StoreWarning[]> {
    return this.durability.current();
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
    const outcome = await this.append(session, type, dataJson, undefined);
    if (outcome.status !== 'created') throw new Error('an event without a key has no earlier record');
    return outcome.event;
  }

  async appendKeyedEvent(session: string, type: string, dataJson: string, key: EventKey): Promise<KeyedEventOutcome> {
    return this.append(session, type, dataJson, key);
  }

  private async append(session: string, type: string, dataJson: string, key: EventKey | undefined): Promise<KeyedEventOutcome> {
    const k = keys(session);
    const composed = composeEvent(type, dataJson, stampOf(session, this.clock()));
    const reply = await this.commit(() =>
      this.redis.hAppend(
        k.heads, k.events, k.queue, k.calls, INDEX_KEY,
        composed.head, this.options.historySize, randomUUID(), CHANNEL, session, type, Date.now(), key ? eventKeyRecord(key.id) : '', key?.fingerprint ?? '',
      ),
    );
    if (reply[0] === 'exists' && key) {
      return keyedEventRepeat({ completed: { fingerprint: String(reply[1]), queueSeq: 0, eventSeq: Number(reply[2]) } }, key) as KeyedEventOutcome;
    }
    return { status: 'created', event: committed(session, Number(reply[1]), composed) };
  }

  async startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    const k = keys(session);
    const now = this.clock();
    const composed = composeToolStarting(input, stampOf(session, now));
    const started = JSON.stringify(startedCall(input, now));
    const reply = await this.commit(() =>
      this.redis.hStartCall(k.heads, k.events, k.queue, k.calls, INDEX_KEY, input.callId, composed.head, started, this.options.historySize, randomUUID(), CHANNEL, session, Date.now()),
    );
    if (reply[0] === 'exists') {
      return startRepeat(callRecord(reply.slice(1)), input) ?? { status: 'conflict', message: 'this call_id already has a record' };
    }
    const event = committed(session, Number(reply[1]), composed);
    return { status: 'created', eventSeq: event.seq, event };
  }

  async completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    const k = keys(session);
    // Optimistic: compose for "no earlier record" (one round trip); the script refuses when the
    // record is another, and the write is decided again from the record it returned.
    let record: CallRecord = {};
    let expected = '';
    for (let attempt = 0; attempt < MAX_RECOMPOSE; attempt++) {
      const decided = completion(record, input, stampOf(session, this.clock()));
      if ('repeat' in decided) return decided.repeat;
      const entry = JSON.stringify(decided.entry);
      const reply = await this.commit(() =>
        this.redis.hCompleteCall(
          k.heads, k.events, k.queue, k.calls, DEPTH_KEY, INDEX_KEY,
          input.callId, expected, entry, decided.composed.head, input.fingerprint, this.options.historySize, randomUUID(), CHANNEL, session, Date.now(),
        ),
      );
      if (reply[0] === 'changed') {
        record = callRecord(reply.slice(1));
        expected = typeof reply[1] === 'string' ? reply[1] : '';
        continue;
      }
      const event = committed(session, Number(reply[2]), decided.composed);
      return { status: 'created', queueSeq: Number(reply[1]), eventSeq: event.seq, event };
    }
    throw new StoreUnavailableError('the call record kept changing under this write; retry');
  }

  async ack(session: string, through: number): Promise<AckOutcome> {
    const k = keys(session);
    const reply = await this.commit(() => this.redis.hAck(k.heads, DEPTH_KEY, through));
    return reply[0] === 'beyond' ? { status: 'beyond_head', head: Number(reply[1]) } : { status: 'ok', committed: Number(reply[1]) };
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hReadEvents(k.heads, k.events, k.queue, k.calls, after, limit, randomUUID(), CHANNEL, session));
    const events = pairs(reply, 3).map(([seq, item]) => eventRecord(session, seq, item));
    return { session, epoch: String(reply[0]), head: Number(reply[1]), oldest: Number(reply[2]), events };
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hReadQueue(k.heads, k.events, k.queue, k.calls, after === undefined ? '' : String(after), limit, randomUUID(), CHANNEL, session));
    const entries = pairs(reply, 3).map(([queueSeq, json]): QueueEntry => ({ queueSeq, ...(JSON.parse(json) as Omit<QueueEntry, 'queueSeq'>) }));
    return { session, committed: Number(reply[0]), head: Number(reply[1]), oldest: Number(reply[2]), entries };
  }

  /**
   * One page of the sessions list from the index (score: last activity in ms). Equal scores come
   * in descending id order here (ZREVRANGEBYSCORE), and the cursor follows that order.
   */
  async listSessions(query: SessionListQuery): Promise<SessionList> {
    const start = query.cursor === undefined ? { lastEventAt: Number.MAX_SAFE_INTEGER, session: '\uffff' } : decodeCursor(query.cursor);
    if (!start) return { sessions: [], next: null };
    const sessions: SessionSummary[] = [];
    const chunk = Math.max(query.limit + 1, 64);
    let offset = 0;
    for (;;) {
      const rows = await this.call(() => this.redis.zrevrangebyscore(INDEX_KEY, start.lastEventAt, '-inf', 'WITHSCORES', 'LIMIT', offset, chunk));
      offset += rows.length / 2;
      for (let k = 0; k < rows.length; k += 2) {
        const session = rows[k] as string;
        const score = Number(rows[k + 1]);
        if (score === start.lastEventAt && session >= start.session) continue;
        if ((query.prefix !== undefined && !session.startsWith(query.prefix)) || !query.covers(session)) continue;
        const summary = await this.sessionSummary(session);
        if (!summary) continue;
        if (sessions.length === query.limit) return { sessions, next: encodeCursor(sessions[sessions.length - 1] as SessionSummary) };
        sessions.push(summary);
      }
      if (rows.length < 2 * chunk) return { sessions, next: null };
    }
  }

  async sessionSummary(session: string): Promise<SessionSummary | undefined> {
    const k = keys(session);
    const [eventHead, queueHead, committed, epoch, createdAt, lastEventAt, oldest] = await this.call(() =>
      this.redis.hSessionSummary(k.heads, k.events, k.queue, k.calls, randomUUID(), CHANNEL, session),
    );
    if (createdAt === null || createdAt === undefined) return undefined;
    return {
      session,
      epoch: String(epoch ?? ''),
      head: Number(eventHead ?? 0),
      oldest: Number(oldest),
      queueHead: Number(queueHead ?? 0),
      committed: Number(committed ?? 0),
      createdAt: Number(createdAt),
      lastEventAt: Number(lastEventAt ?? createdAt),
    };
  }

  async deleteSession(session: string): Promise<boolean> {
    return this.deleteIfInactive(session, '');
  }

  /** Deletes a session, or with a cutoff only if it is still inactive since then (the sweep). */
  private async deleteIfInactive(session: string, inactiveBefore: number | ''): Promise<boolean> {
    const k = keys(session);
    const [deleted] = await this.commit(() => this.redis.hDeleteSession(k.heads, k.events, k.queue, k.calls, DEPTH_KEY, INDEX_KEY, session, CHANNEL, inactiveBefore));
    return Number(deleted) === 1;
  }

  /**
   * One slice of retention, as a sweep (not key expiry, which could drop unacknowledged entries):
   * sessions inactive since the cutoff come from the index by score; acknowledged entries are
   * trimmed session by session, walking the index with ZSCAN (its cursor is the slice's cursor).
   */
  async sweep(policy: SweepPolicy): Promise<SweepResult> {
    const deleted: string[] = [];
    if (policy.inactiveBefore !== undefined) {
      const cutoff = policy.inactiveBefore;
      const expired = await this.call(() => this.redis.zrangebyscore(INDEX_KEY, '-inf', `(${cutoff}`, 'LIMIT', 0, policy.sessions));
      for (const session of expired) if (await this.deleteIfInactive(session, cutoff)) deleted.push(session);
    }
    if (policy.ackedBefore === undefined) return { entriesRemoved: 0, deleted };
    const cutoff = policy.ackedBefore;
    const [next, flat] = await this.call(() => this.redis.zscan(INDEX_KEY, policy.cursor ?? '0', 'COUNT', policy.sessions));
    let entriesRemoved = 0;
    for (let k = 0; k < flat.length && entriesRemoved < policy.entries; k += 2) {
      const { heads, queue } = keys(flat[k] as string);
      const [removed] = await this.call(() => this.redis.hTrimAcked(heads, queue, cutoff, policy.entries - entriesRemoved));
      entriesRemoved += Number(removed);
    }
    return next === '0' ? { entriesRemoved, deleted } : { entriesRemoved, deleted, cursor: next };
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
      this.options.telemetry?.trouble('command_error');
      throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Runs a write script: one commit, timed for the commit metrics. */
  private async commit<T>(run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const reply = await this.call(run);
    this.options.telemetry?.committed(1, (performance.now() - started) / 1000);
    return reply;
  }

  /** A published message: a JSON header (lua/lib.lua), and after its newline an event's frame head. */
  private received(message: string): void {
    const nl = message.indexOf('\n');
    let header: { kind?: string; session?: string; seq?: number; type?: string; head?: number; epoch?: string };
    try {
      header = JSON.parse(nl < 0 ? message : message.slice(0, nl)) as typeof header;
    } catch {
      return;
    }
    const { kind, session } = header;
    if (typeof session !== 'string') return;
    if (kind === 'e' && typeof header.seq === 'number' && typeof header.type === 'string' && nl >= 0) {
      const event: EventRecord = { session, seq: header.seq, type: header.type, frame: frameOf(message.slice(nl + 1), header.seq) };
      if (typeof header.epoch === 'string') event.epoch = header.epoch;
      this.listeners.events([event]);
    } else if (kind === 'q' && typeof header.head === 'number') {
      this.listeners.queue(session, header.head);
    } else if (kind === 'd') {
      this.listeners.deleted(session);
    } else if (kind === 'r') {
      this.listeners.reset(session);
    }
  }
}
