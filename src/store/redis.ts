/**
 * The `redis://` backend, for several instances sharing one truth. Every write is one Lua script
 * (redis-scripts.ts) that checks idempotency, assigns the seqs, appends and publishes the committed
 * event, so concurrent instances never produce a gap, a duplicate or two seqs out of order. The
 * rules around that atomic step (duplicate or conflict, execution time, entry shape) are the
 * Ledger's own pure functions, so this backend cannot drift from sqlite and memory.
 *
 * Fan-out: each session's events, queue heads, resets and deletion go out with SPUBLISH on the
 * session's own shard channel (in its hash slot), and an instance subscribes (SSUBSCRIBE) to the
 * channels of the sessions it has local followers of (`follow`, counted in ChannelInterest), so it
 * receives nothing of the others. Session changes for watch_sessions go out at most once a second
 * per session on one classic channel, subscribed only while the instance has a watcher.
 *
 * Faults: commands are not queued while Redis is unreachable and never retried (a write retried
 * after a lost reply could apply twice), so a request fails at once with StoreUnavailableError
 * (503) and a 202 always means Redis acknowledged the script; with `appendfsync always` that
 * means it is on disk. The subscriber connections subscribe to their channels again when Redis is
 * back, and each session's channel, once back, announces `resync` for the session, because messages
 * published while it was away are gone: its subscriptions re-read what they may have missed.
 */
import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { ChannelInterest, confirmedWithin } from './channel-interest.js';
import { composeEvent, composeToolStarting, frameOf, type ComposedEvent } from '../wire/event-composer.js';
import { completion, eventKeyRecord, keyedEventRepeat, openCallsOf, stampOf, startedCall, startRepeat, systemClock, type CallRecord, type Clock } from './ledger.js';
import { waitAtMost } from '../common/wait-at-most.js';
import { Listeners } from './listeners.js';
import { redisConnections } from './redis-connections.js';
import { RedisHealth } from './redis-health.js';
import { DurabilityCheck } from './redis-durability.js';
import { SCRIPTS, type Arg, type Reply, type Scripts } from './redis-scripts.js';
import { SessionIndex } from './redis-index.js';
import { decodeQueueEntry, encodeQueueEntry } from './redis-queue-entry.js';
import { redisVersion, versionProblem } from './redis-version.js';
import { decodeCursor, encodeCursor } from './session-cursor.js';
import { inState } from '../wire/sessions.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventKey,
  type KeyedEventOutcome,
  type OpenCall,
  type EventPage,
  type EventRecord,
  type QueuePage,
  type StoredQueueEntry,
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
/** The sessions channel: which sessions changed, for watch_sessions (lua/lib.lua announce_change). */
const SESSIONS_CHANNEL = `${PREFIX}:sessions:changes`;
/** The sessions' own heads keys, which the sweep walks (SCAN) to repair the index. */
const HEADS_PATTERN = `${PREFIX}:{*}:heads`;
/** A call record changed between composing and writing (a concurrent tool-calls): decide again. */
const MAX_RECOMPOSE = 5;
/**
 * How long a session's channel stays subscribed after its last local follower left, so that a
 * reconnecting panel does not make the instance unsubscribe and subscribe again.
 */
const FOLLOW_LINGER_MS = 2000;
/** How long a subscription may take to be confirmed before it is sent again, then refused. */
const SUBSCRIBE_DEADLINE_MS = 3000;
/** How long a write waits for its replicas (HOROLOGIUM_REDIS_WAIT_REPLICAS) before it is a 503. */
const REPLICA_WAIT_MS = 1000;
type WriteScript = 'hAppend' | 'hStartCall' | 'hCompleteCall' | 'hAck' | 'hDeleteSession';
/** How long a command may go unanswered when StoreOptions.timeoutMs is not given (HOROLOGIUM_STORE_TIMEOUT's default). */
const DEFAULT_TIMEOUT_MS = 2000;
/** ioredis's error for a command past its commandTimeout. */
const isTimeout = (err: unknown) => err instanceof Error && err.message === 'Command timed out';
/** How long start-up waits for Redis (every connection ready) before it gives up. */
const OPEN_DEADLINE_MS = 15_000;
/**
 * The sessions channel says a session changed at most once a second: a second after each message,
 * the session is looked at again, and when it changed since, its watchers hear of it.
 */
const CHANGE_RECHECK_MS = 1000;
/**
 * When the sessions channel is subscribed (again), the sessions active since this long before (or
 * before the connection was lost) are looked at again a second later, as after a message: a change
 * of theirs may have gone unannounced (the channel's last message for them came before).
 */
const CHANGE_LOOKBACK_MS = 2000;
const MAX_CHANGES_ANNOUNCED = 1000;


const keys = (session: string) => {
  const tag = `${PREFIX}:{${session}}`;
  return { heads: `${tag}:heads`, events: `${tag}:events`, queue: `${tag}:queue`, calls: `${tag}:calls`, channel: `${tag}:ch` };
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

/** The open calls delete-session.lua returned (call_id, started JSON, event seq, flat) as records. */
function openRecords(flat: Reply): Array<[string, CallRecord]> {
  const records: Array<[string, CallRecord]> = [];
  for (let k = 0; k + 2 < flat.length; k += 3) records.push([String(flat[k]), callRecord([flat[k + 1] ?? null, flat[k + 2] ?? null])]);
  return records;
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
  /** Subscribes to the channels of the sessions followed here (SSUBSCRIBE). */
  private readonly sharded: Redis;
  /** Subscribes to the sessions channel while there are watchers (SUBSCRIBE): another connection, as ioredis counts classic and shard subscriptions as one. */
  private readonly watcher: Redis;
  private readonly listeners = new Listeners();
  /** The followed sessions, by session. */
  private readonly channels: ChannelInterest;
  /** The sessions channel's one entry. */
  private readonly sessionsFeed: ChannelInterest;
  /** The look-again timers of the sessions channel's messages, and the change time each announced. */
  private readonly rechecks = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private opened = false;
  /** When the watcher connection was lost (the changes since then are announced once it is back). */
  private watcherLostAt: number | undefined;
  private readonly durability: DurabilityCheck;
  private readonly index: SessionIndex;
  /** The nodes the sweep scans (the one Redis, or a cluster's masters). */
  private readonly masters: () => Redis[];
  /** Resolves when the sharded subscribers know the cluster's slots (at once on a single Redis). */
  private readonly subscribersReady: Promise<unknown>;
  /** Replicas each write must reach before it is acknowledged (StoreOptions.waitReplicas). */
  private readonly waitReplicas: number;
  /** Called when a command fails (a cluster then reads its slots map again). */
  private readonly troubled: () => void;
  /** Pings every connection each second: readiness, and dead links found without traffic. */
  private readonly health: RedisHealth;

  constructor(
    url: string,
    private readonly options: StoreOptions,
    private readonly clock: Clock = systemClock,
  ) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const connections = redisConnections(url, timeoutMs, options.natMap);
    this.health = new RedisHealth(connections.probed, connections.essential, {
      pinged: (at) => this.options.telemetry?.pinged?.(at),
      timedOut: () => this.options.telemetry?.trouble('timeout'),
    });
    this.redis = connections.commands as Redis & Scripts;
    // Subscriptions fail at once while their connection is away (the subscriber is told to try
    // again), and are made again by hand so that `resync` is announced only once a channel is
    // back: an event published before that is then read from the store.
    this.sharded = connections.sharded;
    this.watcher = connections.watcher;
    this.masters = connections.masters;
    this.subscribersReady = connections.subscribersReady;
    this.waitReplicas = options.waitReplicas ?? 0;
    this.troubled = connections.troubled;
    for (const [name, script] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, script);
    this.durability = new DurabilityCheck(this.redis);
    this.index = new SessionIndex(this.redis, (command) => this.call(command));
    this.channels = new ChannelInterest(
      {
        subscribe: (session) => confirmedWithin(() => this.sharded.ssubscribe(keys(session).channel), SUBSCRIBE_DEADLINE_MS),
        unsubscribe: (session) => this.sharded.sunsubscribe(keys(session).channel),
      },
      FOLLOW_LINGER_MS,
    );
    this.sessionsFeed = new ChannelInterest(
      { subscribe: (channel) => confirmedWithin(() => this.watcher.subscribe(channel), SUBSCRIBE_DEADLINE_MS), unsubscribe: (channel) => this.watcher.unsubscribe(channel) },
      FOLLOW_LINGER_MS,
    );
    // Connection errors are reported through failed commands, /readyz and the trouble metrics;
    // not as crashes.
    for (const connection of [this.redis, this.sharded, this.watcher]) {
      connection.on('error', () => undefined);
      connection.on('reconnecting', () => this.options.telemetry?.trouble('reconnect'));
    }
    this.sharded.on('smessage', (_channel: string, message: string) => this.received(message));
    this.sharded.on(connections.resubscribedEvent, () => {
      if (this.opened) this.channels.resubscribe((session) => this.announceResync(session));
    });
    this.watcher.on('message', (_channel: string, message: string) => this.sessionChanged(message));
    this.watcher.on('close', () => (this.watcherLostAt ??= Date.now()));
    this.watcher.on('ready', () => {
      const lostAt = this.watcherLostAt;
      this.watcherLostAt = undefined;
      if (this.opened && lostAt !== undefined) this.sessionsFeed.resubscribe(() => void this.recheckRecent(lostAt));
    });
  }

  async open(): Promise<void> {
    let problem: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const connected = (async () => {
        await this.redis.connect();
        problem = versionProblem(redisVersion(await this.redis.info('server')));
        if (!problem) await Promise.all([this.sharded.connect(), this.watcher.connect(), this.subscribersReady]);
      })();
      // A cluster whose nodes do not agree yet can keep the connection from ever being ready.
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not ready after ${OPEN_DEADLINE_MS / 1000} s (connections: ${this.redis.status}, ${this.sharded.status}, ${this.watcher.status})`)), OPEN_DEADLINE_MS)));
      await Promise.race([connected, late]);
    } catch (err) {
      this.disconnectAll();
      throw new Error(`HOROLOGIUM_STORE: cannot reach Redis: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    if (problem) {
      this.disconnectAll();
      throw new Error(`HOROLOGIUM_STORE: ${problem}`);
    }
    await Promise.all(this.masters().map((node) => this.loadScripts(node)));
    await this.index.adoptLegacy(async (session) => {
      const [head, committed] = await this.call(() => this.redis.hmget(keys(session).heads, 'queue_head', 'committed'));
      return Number(head ?? 0) - Number(committed ?? 0);
    });
    this.watcherLostAt = undefined;
    this.opened = true;
    this.health.start();
  }

  /** What Redis's settings mean for durability (redis-durability.ts): logged at start-up, shown by /readyz. */
  async warnings(): Promise<readonly StoreWarning[]> {
    return this.durability.current();
  }

  async close(): Promise<void> {
    this.opened = false;
    this.health.stop();
    this.channels.clear();
    this.sessionsFeed.clear();
    for (const { timer } of this.rechecks.values()) clearTimeout(timer);
    this.rechecks.clear();
    this.sharded.disconnect();
    this.watcher.disconnect();
    // QUIT lets Redis finish what it was sent; a node that does not answer (a cluster's dead one)
    // does not hold the shutdown up for more than a second.
    if (this.redis.status === 'ready') await waitAtMost(this.redis.quit(), 1000);
    this.redis.disconnect();
  }

  /**
   * Loads every script on a node before it runs one: otherwise its first use there fails with
   * NOSCRIPT and is sent again in full, behind later commands, which would give concurrent writes
   * their seqs out of the order they were sent in. (A failure leaves that fallback.)
   */
  private async loadScripts(node: Redis): Promise<void> {
    await Promise.all(Object.values(SCRIPTS).map((script) => node.script('LOAD', script.lua))).catch(() => undefined);
  }

  private disconnectAll(): void {
    for (const connection of [this.redis, this.sharded, this.watcher]) connection.disconnect();
  }

  /** What the health pings said last: known at once, so /readyz never waits on a silent link. */
  async isReady(): Promise<boolean> {
    return this.opened && this.health.healthy;
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
    const now = Date.now();
    const reply = await this.commit(
      'hAppend',
      k.heads, k.events, k.queue, k.calls,
      composed.head, this.options.historySize, randomUUID(), k.channel, session, type, now, key ? eventKeyRecord(key.id) : '', key?.fingerprint ?? '', SESSIONS_CHANNEL,
    );
    if (reply[0] === 'exists' && key) {
      return keyedEventRepeat({ completed: { fingerprint: String(reply[1]), queueSeq: 0, eventSeq: Number(reply[2]) } }, key) as KeyedEventOutcome;
    }
    await this.indexed(session, now, undefined);
    return { status: 'created', event: this.appended(committed(session, Number(reply[1]), composed)) };
  }

  async startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    const k = keys(session);
    const now = this.clock();
    const composed = composeToolStarting(input, stampOf(session, now));
    const started = JSON.stringify(startedCall(input, now));
    const at = Date.now();
    const reply = await this.commit(
      'hStartCall',
      k.heads, k.events, k.queue, k.calls,
      input.callId, composed.head, started, this.options.historySize, randomUUID(), k.channel, session, at, SESSIONS_CHANNEL,
    );
    if (reply[0] === 'exists') {
      return startRepeat(callRecord(reply.slice(1)), input) ?? { status: 'conflict', message: 'this call_id already has a record' };
    }
    await this.indexed(session, at, undefined);
    const event = this.appended(committed(session, Number(reply[1]), composed));
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
      const entry = encodeQueueEntry(decided.entry);
      const at = Date.now();
      const reply = await this.commit(
        'hCompleteCall',
        k.heads, k.events, k.queue, k.calls,
        input.callId, expected, entry, decided.composed.head, input.fingerprint, this.options.historySize, randomUUID(), k.channel, session, at, SESSIONS_CHANNEL,
        input.isError ? '1' : '0',
      );
      if (reply[0] === 'changed') {
        record = callRecord(reply.slice(1));
        expected = typeof reply[1] === 'string' ? reply[1] : '';
        continue;
      }
      await this.indexed(session, at, Number(reply[3]));
      const event = this.appended(committed(session, Number(reply[2]), decided.composed));
      return { status: 'created', queueSeq: Number(reply[1]), eventSeq: event.seq, event, timing: decided.timing };
    }
    throw new StoreUnavailableError('the call record kept changing under this write; retry');
  }

  async ack(session: string, through: number): Promise<AckOutcome> {
    const k = keys(session);
    const reply = await this.commit('hAck', k.heads, through);
    if (reply[0] === 'beyond') return { status: 'beyond_head', head: Number(reply[1]) };
    await this.indexed(session, undefined, Number(reply[2]));
    return { status: 'ok', committed: Number(reply[1]) };
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    const k = keys(session);
    const reply = await this.call(() => this.redis.hReadEvents(k.heads, k.events, k.queue, k.calls, after, limit, randomUUID(), k.channel, session));
    const events = pairs(reply, 3).map(([seq, item]) => eventRecord(session, seq, item));
    return { session, epoch: String(reply[0]), head: Number(reply[1]), oldest: Number(reply[2]), events };
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    const k = keys(session);
    // Buffers: each entry's result goes into the reply as the bytes Redis holds (redis-queue-entry.ts).
    const reply = await this.call(() => this.redis.hReadQueueBuffer(k.heads, k.events, k.queue, k.calls, after === undefined ? '' : String(after), limit, randomUUID(), k.channel, session));
    const entries: StoredQueueEntry[] = [];
    for (let at = 3; at + 1 < reply.length; at += 2) entries.push(decodeQueueEntry(Number(String(reply[at])), reply[at + 1] as Buffer));
    return { session, committed: Number(String(reply[0])), head: Number(String(reply[1])), oldest: Number(String(reply[2])), entries };
  }

  async toolResult(session: string, callId: string): Promise<StoredQueueEntry | undefined> {
    const k = keys(session);
    const queueSeq = await this.call(() => this.redis.hget(k.calls, `cq\n${callId}`));
    if (!queueSeq) return undefined;
    const value = await this.call(() => this.redis.hgetBuffer(k.queue, queueSeq));
    return value ? decodeQueueEntry(Number(queueSeq), value) : undefined;
  }

  /**
   * One page of the sessions list from the index (redis-index.ts: its shards merged newest first;
   * equal activity in descending id order, which the cursor follows). An entry whose session is
   * gone (deleted, or lost with its keys) is skipped.
   */
  async listSessions(query: SessionListQuery): Promise<SessionList> {
    const start = query.cursor === undefined ? { lastEventAt: Number.MAX_SAFE_INTEGER, session: '\uffff' } : decodeCursor(query.cursor);
    if (!start) return { sessions: [], next: null };
    const sessions: SessionSummary[] = [];
    for await (const { session } of this.index.newestFirst(start)) {
      if ((query.prefix !== undefined && !session.startsWith(query.prefix)) || !query.covers(session)) continue;
      const summary = await this.sessionSummary(session);
      if (!summary || (query.state !== undefined && !inState(summary, query.state))) continue;
      if (sessions.length === query.limit) return { sessions, next: encodeCursor(sessions[sessions.length - 1] as SessionSummary) };
      sessions.push(summary);
    }
    return { sessions, next: null };
  }

  async sessionSummary(session: string): Promise<SessionSummary | undefined> {
    const k = keys(session);
    const [eventHead, queueHead, committed, epoch, createdAt, lastEventAt, oldest, openCalls, errors] = await this.call(() =>
      this.redis.hSessionSummary(k.heads, k.events, k.queue, k.calls, randomUUID(), k.channel, session),
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
      openCalls: Number(openCalls ?? 0),
      errors: Number(errors ?? 0),
    };
  }

  async deleteSession(session: string): Promise<OpenCall[] | undefined> {
    return this.deleteIfInactive(session, '');
  }

  /**
   * Deletes a session, or with a cutoff only if it is still inactive since then (the sweep); the
   * calls it still had open, or undefined when nothing was deleted.
   */
  private async deleteIfInactive(session: string, inactiveBefore: number | ''): Promise<OpenCall[] | undefined> {
    const k = keys(session);
    // The index entry goes after the keys, unless a write came meanwhile (its activity is later).
    // An explicit deletion counts the millisecond it started in as before it: a write in that same
    // millisecond (the usual case for a delete right after a write) is the one being deleted.
    const cutoff = inactiveBefore === '' ? Date.now() + 1 : inactiveBefore;
    const [deleted, last] = await this.commit('hDeleteSession', k.heads, k.events, k.queue, k.calls, session, k.channel, inactiveBefore, SESSIONS_CHANNEL);
    if (Number(deleted) !== 1) {
      // Active since: the index learns its activity. Gone: an entry left behind goes.
      if (last !== null && last !== undefined) await this.indexed(session, Number(last), undefined);
      else await this.index.removed(session, cutoff).catch(() => false);
      return undefined;
    }
    await this.index.removed(session, cutoff).catch(() => false); // Counted by `call`; the sweep removes it later.
    // Told here at once; the other instances (and this one, again) hear it on the session's channel.
    this.listeners.deleted(session);
    return openCallsOf(session, openRecords(last as unknown as Reply));
  }

  /**
   * One slice of retention, as a sweep (not key expiry, which could drop unacknowledged entries):
   * sessions inactive since the cutoff come from the index; then the sessions' own heads keys are
   * walked with SCAN (its cursor is the slice's), which trims each one's acknowledged entries and
   * records its activity and depth in the index: what a crash between a write and its index update
   * left out is repaired here.
   */
  async sweep(policy: SweepPolicy): Promise<SweepResult> {
    const deleted: string[] = [];
    const openCalls: OpenCall[] = [];
    if (policy.inactiveBefore !== undefined) {
      for (const session of await this.index.expired(policy.inactiveBefore, policy.sessions)) {
        const open = await this.deleteIfInactive(session, policy.inactiveBefore);
        if (!open) continue;
        deleted.push(session);
        openCalls.push(...open);
      }
    }
    const cutoff = policy.ackedBefore ?? '';
    // The cursor: which node (a cluster's masters in a stable order) and where on it. A slice goes
    // on to the next node while it has visited fewer sessions than its bound.
    const nodes = this.masters();
    let [nodeAt, scanAt] = (policy.cursor ?? '0:0').split(':').map(Number) as [number, number];
    let entriesRemoved = 0;
    let visited = 0;
    let next: string | undefined;
    for (let node = nodes[nodeAt]; node && visited < policy.sessions; node = nodes[nodeAt]) {
      const [scanned, found] = await this.call(() => node.scan(scanAt, 'MATCH', HEADS_PATTERN, 'COUNT', policy.sessions));
      for (const heads of found) {
        const session = heads.slice(PREFIX.length + 2, -'}:heads'.length);
        const budget = Math.max(0, policy.entries - entriesRemoved);
        const [removed, last, unacked] = await this.call(() => this.redis.hTrimAcked(heads, keys(session).queue, budget > 0 ? cutoff : '', budget));
        entriesRemoved += Number(removed);
        visited++;
        if (last !== null && last !== undefined) await this.indexed(session, Number(last), Number(unacked));
      }
      if (scanned !== '0') {
        scanAt = Number(scanned);
        next = `${nodeAt}:${scanAt}`;
      } else {
        [nodeAt, scanAt] = [nodeAt + 1, 0];
        next = nodeAt < nodes.length ? `${nodeAt}:0` : undefined;
      }
    }
    return next === undefined ? { entriesRemoved, deleted, openCalls } : { entriesRemoved, deleted, openCalls, cursor: next };
  }

  /**
   * Records a committed write in the sessions index. The write stands whatever happens here (it is
   * acknowledged): an update that fails is counted, and repaired by the next write or the sweep.
   */
  private async indexed(session: string, at: number | undefined, unacked: number | undefined): Promise<void> {
    await this.index.touched(session, at, unacked).catch(() => undefined);
  }

  async queueDepth(): Promise<number> {
    return this.index.depth();
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

  follow(session: string): Promise<void> {
    return this.subscribed(this.channels.follow(session));
  }

  unfollow(session: string): void {
    this.channels.unfollow(session);
  }

  async followSessions(): Promise<void> {
    const first = !this.sessionsFeed.has(SESSIONS_CHANNEL);
    await this.subscribed(this.sessionsFeed.follow(SESSIONS_CHANNEL));
    if (first) void this.recheckRecent(Date.now());
  }

  unfollowSessions(): void {
    this.sessionsFeed.unfollow(SESSIONS_CHANNEL);
  }

  /** A subscription that cannot be made is the store being unavailable (the subscriber is told). */
  private async subscribed(ready: Promise<void>): Promise<void> {
    try {
      await ready;
    } catch (err) {
      this.options.telemetry?.trouble(isTimeout(err) ? 'timeout' : 'command_error');
      throw new StoreUnavailableError(`redis: cannot subscribe: ${(err as Error).message}`, { cause: err });
    }
  }

  /** An event this instance committed, for the listeners that count them; returned as it is. */
  private appended(event: EventRecord): EventRecord {
    this.listeners.appended([event]);
    return event;
  }

  /**
   * A session's channel is subscribed again after its connection was lost. The connections come
   * back at their own pace: the subscriptions re-read through the command connection, so `resync`
   * waits until that one is ready too.
   */
  private announceResync(session: string): void {
    if (this.redis.status === 'ready') this.listeners.resync(session);
    else this.redis.once('ready', () => this.listeners.resync(session));
  }

  /**
   * A message of the sessions channel (lua/lib.lua announce_change): "<ms>\n<session>" for a change
   * at that time, "-\n<session>" for a deletion. Its watchers hear of it now; a second later the
   * session is looked at again, and if it changed after the time announced (a change the channel
   * did not carry, as it says at most one a second), they hear of it again.
   */
  private sessionChanged(message: string): void {
    this.options.telemetry?.received('sessions');
    const nl = message.indexOf('\n');
    if (nl < 0) return;
    const session = message.slice(nl + 1);
    const pending = this.rechecks.get(session);
    if (pending) {
      clearTimeout(pending.timer);
      this.rechecks.delete(session);
    }
    this.listeners.changed(session);
    const at = Number(message.slice(0, nl));
    if (Number.isFinite(at)) this.recheck(session, at); // Not after a deletion: nothing after it goes unannounced.
  }

  /** Looks at `session` again in a second: its watchers hear of it if it changed after `at`. */
  private recheck(session: string, at: number): void {
    const timer = setTimeout(() => {
      this.rechecks.delete(session);
      this.redis.hget(keys(session).heads, 'last_event_at').then(
        (last) => {
          if (last !== null && Number(last) > at) this.listeners.changed(session);
        },
        () => undefined, // Redis away: the watchers hear of the session at its next change.
      );
    }, CHANGE_RECHECK_MS);
    timer.unref();
    this.rechecks.set(session, { at, timer });
  }

  /**
   * The sessions channel was just subscribed (again) at `since` (or lost then): a session active
   * shortly before may change without a message (the channel's last one for it came before), so
   * each is looked at again as after a message, and its watchers hear of changes after `since`.
   */
  private async recheckRecent(since: number): Promise<void> {
    const recent = await this.index.activeSince(since - CHANGE_LOOKBACK_MS, MAX_CHANGES_ANNOUNCED).catch(() => [] as string[]);
    for (const session of recent) if (!this.rechecks.has(session)) this.recheck(session, since);
  }

  /** Runs a command; any failure to reach Redis is the store being unavailable (503). */
  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      this.options.telemetry?.trouble('command_error');
      if (this.opened) this.troubled();
      throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Runs a write script: one commit, timed for the commit metrics. With `waitReplicas`, the script
   * and a WAIT go to the session's node in one pipeline, and the write counts as done (202) only
   * once that many replicas have it: a failover then cannot lose it. A write a replica did not
   * confirm in time is a 503 (it is stored on the master; a retry is safe, as after a lost reply).
   */
  private async commit(script: WriteScript, ...keysAndArgs: Arg[]): Promise<Reply> {
    const started = performance.now();
    const reply = await this.call(async () => {
      if (this.waitReplicas === 0) return this.redis[script](...keysAndArgs);
      const pipeline = this.redis.pipeline() as unknown as Record<WriteScript, (...a: Arg[]) => ChainableCommander>;
      const results = await pipeline[script](...keysAndArgs).call('WAIT', this.waitReplicas, REPLICA_WAIT_MS).exec();
      const [[scriptError, written] = [], [waitError, reached] = []] = results ?? [];
      if (scriptError) throw scriptError;
      if (waitError) throw waitError;
      if (Number(reached) < this.waitReplicas) {
        throw new Error(`the write reached ${Number(reached)} of ${this.waitReplicas} replicas in ${REPLICA_WAIT_MS} ms`);
      }
      return written as Reply;
    });
    this.options.telemetry?.committed(1, (performance.now() - started) / 1000);
    return reply;
  }

  /** A published message: a JSON header (lua/lib.lua), and after its newline an event's frame head. */
  private received(message: string): void {
    this.options.telemetry?.received('session');
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
      this.listeners.delivered([event]);
    } else if (kind === 'q' && typeof header.head === 'number') {
      this.listeners.queue(session, header.head);
    } else if (kind === 'd') {
      this.listeners.deleted(session);
    } else if (kind === 'r') {
      this.listeners.reset(session);
    }
  }
}
