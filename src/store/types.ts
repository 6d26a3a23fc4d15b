import type { QueueReplyEntry, QueueReplyPage } from '../wire/queue-reply.js';
import type { SessionState, SessionSummary } from '../wire/sessions.js';
import type { ToolCompletedFields, ToolStartingFields } from '../wire/event-composer.js';

/**
 * The Store contract: what every backend (memory.ts, sqlite.ts, redis.ts) guarantees.
 * One behaviour suite (test/store/behaviour.ts) runs against each of them.
 *
 * Guarantees (docs/protocol.md section 6), per session:
 * - **Durability**: a returned promise of a write resolves only after the write is committed (for
 *   sqlite: the transaction holding it has committed in WAL with synchronous=FULL). A rejected
 *   write stored nothing.
 * - **Atomicity**: each write method is all or nothing: the call record, the queue entry and the
 *   event of one `completeCall` are committed together or not at all.
 * - **Order**: `seq` (events) and `queueSeq` (model queue) are 1, 2, 3, … without gaps, in the
 *   order the writes were accepted; a write never observes a half-done concurrent one.
 * - **Idempotency**: `completeCall` for a `callId` that already completed stores and publishes
 *   nothing and reports `duplicate` (same fingerprint) or `conflict` (a different one).
 * - **Retention**: the last `historySize` events of each session are kept for replay; queue entries
 *   are never dropped.
 * - **Epoch**: `epoch` names one incarnation of a session's event log and changes only when that
 *   log is lost or reset (a memory store restarted, a Redis key flushed, the session deleted). A
 *   session that does not exist yet reports the epoch its first write will give it.
 * - **Existence**: a session exists from its first accepted write (tool-calls, tool-results,
 *   events) until it is deleted; reads and acks never create one.
 * - **Notification**: listeners hear of committed events in seq order per session, after commit,
 *   and never of uncommitted ones. A backend whose notifications can be lost in transit (redis)
 *   may skip some, and then calls `resync` once it can notify again; a listener that must not
 *   miss any fills gaps from the store (the hub does).
 */

export interface EventRecord {
  session: string;
  seq: number;
  type: string;
  /** The complete status frame text, the same bytes over HTTP replay and the WebSocket. */
  frame: string;
  /**
   * The epoch it was committed under, on a live notification of a backend whose log can be reset
   * under a running subscription (redis: a flushed or evicted key). A subscriber that holds another
   * epoch knows the log it follows is gone (stream/connection.ts).
   */
  epoch?: string;
}

export interface EventPage {
  session: string;
  epoch: string;
  head: number;
  /** Seq of the oldest retained event, 0 when none is retained. */
  oldest: number;
  events: EventRecord[];
}

/** A W3C trace context as a producer's request carried it (headers `traceparent`, `tracestate`). */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** What a session's earlier tool-calls request left for its tool-results. */
export interface StartedCall {
  name: string;
  /** Canonical JSON text of the `args` sent to tool-calls, or null when absent. */
  argsJson: string | null;
  /** JSON text of the `arguments` event member derived from those args. */
  argumentsJson: string;
  /** Timestamp (seconds) of the tool_starting event. */
  startedAt: number;
  /** The tool-calls request's trace context, kept when tracing is on (the span's parent if tool-results brings none). */
  traceContext?: TraceContext;
}

/** A tool-calls write: what its tool_starting event says (name, callId, args) and what is kept of it. */
export interface StartCallInput extends ToolStartingFields {
  /** Canonical JSON text of the body's args, or null when absent. */
  argsJson: string | null;
  /** Fingerprint of name and args: a repeat with another fingerprint is a conflict. */
  fingerprint: string;
  /** Kept with the started call (not part of the fingerprint: a repeat from another trace is still a repeat). */
  traceContext?: TraceContext;
}

export type StartCallOutcome =
  | { status: 'created'; eventSeq: number; event: EventRecord }
  | { status: 'duplicate'; eventSeq: number }
  | { status: 'conflict'; message: string };

export interface CompleteCallInput {
  callId: string;
  name: string;
  /** Canonical JSON text of the body's args, or null when the body has none. */
  argsJson: string | null;
  /** Canonical JSON text of the complete result, stored and returned byte for byte. */
  resultJson: string;
  /** JSON text of the producer's execution_time, or null to measure it from the started call. */
  executionTimeJson: string | null;
  isError: boolean;
  /** Fingerprint of name, args and result (docs/protocol.md section 4: compared as JSON text). */
  fingerprint: string;
  /**
   * What the route knows of the tool_completed data; the write adds the execution time in effect
   * and, when the body sent no args, the started call's arguments (wire/event-composer.ts).
   */
  completed: ToolCompletedFields;
}

/** When a completed call ran, as its records tell it (its trace span, telemetry/tool-spans.ts). */
export interface CallTiming {
  /** The tool_starting event, when the call was started with tool-calls; its trace context if one was kept. */
  started: { at: number; seq: number; traceContext?: TraceContext } | null;
  /** Timestamp (seconds) of the tool_completed event. */
  completedAt: number;
  /** The execution time in effect (seconds): the producer's, or measured from tool_starting; null when neither. */
  executionTime: number | null;
}

export type CompleteCallOutcome =
  | { status: 'created'; queueSeq: number; eventSeq: number; event: EventRecord; timing: CallTiming }
  | { status: 'duplicate'; queueSeq: number; eventSeq: number }
  | { status: 'conflict'; message: string };

/**
 * A generic event's idempotency key (the body's `event_id`, docs/protocol.md section 4): a repeat
 * of the id with the same type and data stores nothing and reports the first event's seq.
 */
export interface EventKey {
  id: string;
  /** Fingerprint of the event's type and data as JSON text. */
  fingerprint: string;
}

export type KeyedEventOutcome =
  | { status: 'created'; event: EventRecord }
  | { status: 'duplicate'; eventSeq: number }
  | { status: 'conflict'; message: string };

/**
 * A queue entry as read back, and a page of them, as the queue reply is built from them
 * (wire/queue-reply.ts): the result as the stored UTF-8 bytes of its JSON text, so that a large
 * result goes into the reply without becoming a JS string.
 */
export type StoredQueueEntry = QueueReplyEntry;
export type QueuePage = QueueReplyPage;

/** A queue entry as the ledger composes it and a backend writes it: its result as JSON text. */
export interface QueueEntry extends Omit<QueueReplyEntry, 'result'> {
  resultJson: string;
}

/** One session as the sessions list shows it (its JSON is built by wire/sessions.ts). */
export type { SessionSummary };

export interface SessionListQuery {
  limit: number;
  /** The opaque cursor of the previous page's `next`. */
  cursor?: string;
  prefix?: string;
  /** Only sessions in this state (v1.2: running, failed, idle). */
  state?: SessionState;
  /** Only sessions this accepts (the token's patterns). */
  covers: (session: string) => boolean;
}

export interface SessionList {
  sessions: SessionSummary[];
  next: string | null;
}

export type AckOutcome = { status: 'ok'; committed: number } | { status: 'beyond_head'; head: number };

/**
 * One slice of the retention sweep (docs/protocol.md section 9). Bounded: at most `sessions`
 * sessions visited and `entries` entries removed, so that no slice holds the store for long.
 */
export interface SweepPolicy {
  /** Remove acknowledged entries received before this time (ms); absent keeps them. */
  ackedBefore?: number;
  /** Delete sessions whose last event is before this time (ms), as DELETE does; absent deletes none. */
  inactiveBefore?: number;
  sessions: number;
  entries: number;
  /** Where the previous slice of this pass stopped; absent starts a pass. */
  cursor?: string;
}

/**
 * A call started with tool-calls and never completed, as its record kept it: what the deletion of
 * its session ends (its trace span ends as an error, telemetry/tool-spans.ts).
 */
export interface OpenCall {
  session: string;
  callId: string;
  name: string;
  /** Timestamp (seconds) and seq of its tool_starting event. */
  startedAt: number;
  eventSeq: number;
  traceContext?: TraceContext;
}

export interface SweepResult {
  entriesRemoved: number;
  /** The sessions this slice deleted (their subscribers are told). */
  deleted: string[];
  /** The calls the deleted sessions still had open. */
  openCalls: OpenCall[];
  /** Where the next slice goes on; absent when this pass is done. */
  cursor?: string;
}

/** One write, as plain data: what a backend applies inside its transaction (or hands to a thread). */
export type WriteOp =
  | { kind: 'start'; session: string; input: StartCallInput }
  | { kind: 'complete'; session: string; input: CompleteCallInput }
  | { kind: 'event'; session: string; type: string; dataJson: string }
  | { kind: 'keyedEvent'; session: string; type: string; dataJson: string; key: EventKey }
  | { kind: 'ack'; session: string; through: number }
  | { kind: 'delete'; session: string }
  | { kind: 'sweep'; session: ''; policy: SweepPolicy };

interface OutcomeOf {
  /** The calls the deleted session still had open; undefined when there was no session to delete. */
  delete: OpenCall[] | undefined;
  sweep: SweepResult;
  start: StartCallOutcome;
  complete: CompleteCallOutcome;
  event: EventRecord;
  keyedEvent: KeyedEventOutcome;
  ack: AckOutcome;
}

/** What a write did, stated by its kind. */
export type Applied = { [K in WriteOp['kind']]: { kind: K; session: string; value: OutcomeOf[K] } }[WriteOp['kind']];

export interface StoreListener {
  /**
   * Events committed, in seq order for their session: on redis only those of the sessions this
   * instance follows (Store.follow), on memory and sqlite all of them.
   */
  events?(events: readonly EventRecord[]): void;
  /** Events this instance committed (each event is heard here by exactly one instance): for counting. */
  appended?(events: readonly EventRecord[]): void;
  /**
   * A session was created, got an event or was deleted (for watch_sessions; redis: while
   * Store.followSessions is held, at most about once a second per session, and again a second
   * after each, which shows what changed in between).
   */
  changed?(session: string): void;
  /** A session was deleted (its subscribers are told). */
  deleted?(session: string): void;
  /**
   * A session's log was found damaged or lost (redis: a key flushed, evicted or restored from
   * another moment) and started again under a new epoch: its subscribers re-read it.
   */
  reset?(session: string): void;
  /** A session's model queue has grown to `head`. */
  queue?(session: string, head: number): void;
  /**
   * The live feed of `session` may have missed events (redis: the subscriber connection was lost
   * and the session's channel is subscribed again): re-read from the store what must not be missed.
   */
  resync?(session: string): void;
}

/** One warning of Store.warnings: a stable code and a sentence for people. */
export interface StoreWarning {
  code: string;
  message: string;
}

export type StoreTrouble = 'command_error' | 'reconnect' | 'timeout';
export type RedisChannelKind = 'session' | 'sessions';

export interface Store {
  /** `memory`, `sqlite` or `redis`: for logs and metrics. */
  readonly kind: string;
  /**
   * What the backend's own settings mean for the service's promises, that an operator must know
   * (redis: a policy that evicts keys, no AOF): logged at start-up and shown by /readyz.
   */
  warnings?(): Promise<readonly StoreWarning[]>;
  open(): Promise<void>;
  /** Finishes pending writes, then releases the backend. */
  close(): Promise<void>;
  /** False while the backend cannot take writes (for /readyz). */
  isReady(): Promise<boolean>;

  startCall(session: string, input: StartCallInput): Promise<StartCallOutcome>;
  completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome>;
  appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord>;
  /** appendEvent once per `key.id` in the session (until it is deleted): a repeat stores nothing. */
  appendKeyedEvent(session: string, type: string, dataJson: string, key: EventKey): Promise<KeyedEventOutcome>;

  /** Entries with queueSeq > after (default: the committed cursor), at most `limit`. */
  readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage>;
  /**
   * The queue entry of a completed call, found by its call_id: its complete result, byte for byte;
   * undefined when the call has no result or retention has removed its entry.
   */
  toolResult(session: string, callId: string): Promise<StoredQueueEntry | undefined>;
  /** Moves the committed cursor forward to `through` (never back). */
  ack(session: string, through: number): Promise<AckOutcome>;
  /** Retained events with seq > after, oldest first, at most `limit`. */
  readEvents(session: string, after: number, limit: number): Promise<EventPage>;
  /** Unacknowledged entries across all sessions (for the queue depth gauge). */
  queueDepth(): Promise<number>;

  /** Sessions by last activity, most recent first, without reading every session. */
  listSessions(query: SessionListQuery): Promise<SessionList>;
  /** One session, or undefined when it does not exist (reads never create one). */
  sessionSummary(session: string): Promise<SessionSummary | undefined>;
  /**
   * Removes the session's events, queue and call records, and answers the calls it still had
   * open (started, never completed); undefined when there was no session. The next write starts
   * it again at seq 1 with a new epoch, and its call_ids may be used again.
   */
  deleteSession(session: string): Promise<OpenCall[] | undefined>;
  /**
   * One bounded slice of retention: acknowledged entries older than `ackedBefore` and sessions
   * inactive since `inactiveBefore`. Never removes an unacknowledged entry except with its
   * session. Safe while writes arrive: a session written meanwhile is not deleted by it.
   */
  sweep(policy: SweepPolicy): Promise<SweepResult>;

  /** Registers a listener for committed writes; returns its removal. */
  listen(listener: StoreListener): () => void;
  /**
   * This instance has a local follower of `session` (a stream subscription, a long-poll): resolves
   * once every commit of the session from this moment on will reach the listeners, so that a read
   * made after it misses nothing. memory and sqlite hear every commit anyway; redis subscribes to
   * the session's channel. Each follow that resolved is given back with `unfollow`.
   */
  follow(session: string): Promise<void>;
  unfollow(session: string): void;
  /** The same for the `changed` notifications (a watch_sessions watcher). */
  followSessions(): Promise<void>;
  unfollowSessions(): void;
}

export interface StoreOptions {
  /** Events retained per session (HOROLOGIUM_HISTORY_SIZE). */
  historySize: number;
  /** Where the backend reports how its commits and connections fare (the metrics); none in most tests. */
  telemetry?: StoreTelemetry;
  /**
   * redis: replicas each write must reach (WAIT) before it is acknowledged, so that a failover to
   * a replica loses no acknowledged write (HOROLOGIUM_REDIS_WAIT_REPLICAS; 0 by default).
   */
  waitReplicas?: number;
  /**
   * Shared stores (redis): how long a command may go unanswered, in ms (HOROLOGIUM_STORE_TIMEOUT, 2 s
   * by default). Past it the command fails (503), its connection is torn down and made again, and
   * readiness says unavailable until a ping is answered.
   */
  timeoutMs?: number;
  /** Redis Cluster: where to reach each node, by the host:port the cluster announces (HOROLOGIUM_REDIS_NAT_MAP). */
  natMap?: Record<string, { host: string; port: number }>;
  /**
   * sqlite: commit a small batch on the main thread when the writer thread is idle (the default:
   * cheaper at low load, the same commit). false keeps every commit on the writer thread.
   */
  inlineCommits?: boolean;
}

/**
 * How the backend fares, for operators (metrics.ts): apart from the domain listeners, which hear
 * what was committed, and given at construction, since it is one sink for the store's lifetime.
 */
export interface StoreTelemetry {
  /**
   * A commit reached the backend: how many writes it held (sqlite joins concurrent writes into one
   * transaction; a redis script is one write) and how long it took, from hand-over to reply.
   */
  committed(writes: number, seconds: number): void;
  /** The backend had trouble (redis): a command failed, or a connection is reconnecting. */
  trouble(kind: StoreTrouble): void;
  /** A shared store's connection answered a health ping; `at` is when (ms since the epoch). */
  pinged?(at: number): void;
  /** redis: a pub/sub message arrived, on a session's channel or on the sessions channel. */
  received(channel: RedisChannelKind): void;
}

/** The backend cannot be reached or cannot commit; the request stored nothing (503). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
