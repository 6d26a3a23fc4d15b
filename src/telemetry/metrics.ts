/**
 * Prometheus metrics (prom-client), every name of ours prefixed `horologium_`, every label bounded
 * (docs/operations.md lists them). One registry per app, so that tests can build several apps in
 * one process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AuthFailureKind } from '../auth/authenticator.js';
import type { AuthSurface } from '../auth/guard.js';
import { STREAM_KINDS, type StreamKind } from '../wire/stream-kinds.js';
import type { RedisChannelKind, Store, StoreTelemetry } from '../store/types.js';
import { VERSION } from '../common/version.js';

const LABELLED_EVENT_TYPES: ReadonlySet<string> = new Set(['tool_starting', 'tool_completed']);

/** Running totals of one stream kind since start-up, added to by each connection's StreamTelemetry. */
export class StreamTotals {
  frames = 0;
  bytes = 0;
  replayed = 0;
  slowConsumerCloses = 0;
  /** Closes by close-code label. */
  readonly closes = new Map<string, number>();
}

/** One sample of a scraped metric: its labels and value. */
type Sample = [Record<string, string>, number];

/** Open connections and their subscriptions, of one stream kind. */
export interface StreamCensus {
  connections: number;
  subscriptions: number;
}

export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'horologium_http_requests_total',
    help: 'HTTP requests by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly eventsAppended = new Counter({
    name: 'horologium_events_appended_total',
    help: 'Status events committed to session event logs, by type (tool_starting, tool_completed, or other).',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly ingestDuration = new Histogram({
    name: 'horologium_ingest_duration_seconds',
    help: 'Time from a tool-results request being parsed to its commit.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly storeCommitDuration = new Histogram({
    name: 'horologium_store_commit_duration_seconds',
    help: 'Time for one store commit, from hand-over to the backend to its reply (sqlite: one fsynced transaction; redis: one script).',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  readonly storeCommitWrites = new Histogram({
    name: 'horologium_store_commit_writes',
    help: 'Writes per store commit (sqlite joins concurrent writes into one transaction; a redis commit is one write).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });

  readonly redisCommandErrors = new Counter({
    name: 'horologium_redis_command_errors_total',
    help: 'Redis commands that failed (unreachable, timed out, or refused).',
    registers: [this.registry],
  });

  readonly redisReconnects = new Counter({
    name: 'horologium_redis_reconnects_total',
    help: 'Reconnection attempts of the Redis connections (commands and pub/sub).',
    registers: [this.registry],
  });

  readonly storeTimeouts = new Counter({
    name: 'horologium_store_timeouts_total',
    help: 'Store commands and health pings that got no reply within HOROLOGIUM_STORE_TIMEOUT (their connection is made again).',
    registers: [this.registry],
  });

  /** When a shared store's connection last answered a health ping (ms since the epoch); 0: never. */
  private lastStorePing = 0;

  readonly storePingAge = new Gauge({
    name: 'horologium_store_ping_age_seconds',
    help: 'Seconds since a connection of the shared store (redis) last answered a health ping; absent for embedded stores.',
    registers: [this.registry],
    collect: () => {
      if (this.lastStorePing > 0) this.storePingAge.set((Date.now() - this.lastStorePing) / 1000);
    },
  });

  readonly retentionEntriesRemoved = new Counter({
    name: 'horologium_retention_entries_removed_total',
    help: 'Acknowledged queue entries removed by HOROLOGIUM_RETAIN_ACKED.',
    registers: [this.registry],
  });

  readonly retentionSessionsRemoved = new Counter({
    name: 'horologium_retention_sessions_removed_total',
    help: 'Sessions deleted by HOROLOGIUM_SESSION_TTL.',
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'horologium_http_request_duration_seconds',
    help: 'HTTP request duration (headers received to reply sent) by route, method and status class (2xx, 4xx, …).',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  readonly authFailures = new Counter({
    name: 'horologium_auth_failures_total',
    help: 'Refused tokens and scopes, by surface (http, ws, sse, ag_ui, ui_message) and kind (missing, malformed, invalid, expired, forbidden).',
    labelNames: ['surface', 'kind'] as const,
    registers: [this.registry],
  });

  readonly streamRefused = new Counter({
    name: 'horologium_stream_refused_total',
    help: 'Stream openings refused before the stream started (an HTTP error reply), by stream and error code.',
    labelNames: ['stream', 'code'] as const,
    registers: [this.registry],
  });

  /** What each stream kind carried, kept as plain numbers on the send path and published at scrape. */
  readonly streams = Object.fromEntries(STREAM_KINDS.map((kind) => [kind, new StreamTotals()])) as Record<StreamKind, StreamTotals>;

  private store: Store | undefined;
  /** Pub/sub messages the redis backend received, by channel kind (a plain count on the hot path). */
  private readonly redisReceived: Record<RedisChannelKind, number> = { session: 0, sessions: 0 };

  constructor() {
    const registry = this.registry;
    const metrics = this;
    new Gauge({
      name: 'horologium_build_info',
      help: 'Always 1; the labels say which build runs on which Node.js.',
      labelNames: ['version', 'node'] as const,
      registers: [registry],
    }).set({ version: VERSION, node: process.versions.node }, 1);
    const streams = this.streams;
    const perStream = (value: (totals: StreamTotals) => number) => () => STREAM_KINDS.map((stream): Sample => [{ stream }, value(streams[stream])]);
    const streamCounter = (name: string, help: string, value: (totals: StreamTotals) => number) => this.scraped(Counter, name, help, ['stream'], perStream(value));
    streamCounter('horologium_stream_frames_sent_total', 'Stream messages sent (status, subscribed, error, …; heartbeats not counted).', (s) => s.frames);
    streamCounter('horologium_stream_bytes_sent_total', 'Bytes of those messages as written (WebSocket frames, SSE records).', (s) => s.bytes);
    streamCounter('horologium_stream_replay_events_total', 'Events sent from the store (replay after subscribe, catch-up after a gap) rather than live.', (s) => s.replayed);
    streamCounter('horologium_stream_slow_consumer_closes_total', 'Connections closed because the client stopped reading (4008).', (s) => s.slowConsumerCloses);
    this.scraped(
      Counter,
      'horologium_stream_closes_total',
      'Stream connections ended, by stream and close code (an SSE response: the code its WebSocket twin would have; 1000 when the client left).',
      ['stream', 'code'],
      () => STREAM_KINDS.flatMap((stream) => [...streams[stream].closes].map(([code, n]): Sample => [{ stream, code }, n])),
    );
    this.scraped(
      Counter,
      'horologium_redis_messages_received_total',
      "Pub/sub messages this instance received from Redis: on the channels of the sessions it has subscribers of (session), and on the sessions channel while it has watch_sessions watchers (sessions).",
      ['channel'],
      () => Object.entries(this.redisReceived).map(([channel, n]): Sample => [{ channel }, n]),
    );
    new Gauge({
      name: 'horologium_queue_depth',
      help: 'Unacknowledged model queue entries across all sessions.',
      registers: [registry],
      async collect() {
        // An unreachable store must not turn /metrics into a 500; the gauge keeps its last value.
        const depth = await metrics.store?.queueDepth().catch(() => undefined);
        if (depth !== undefined) this.set(depth);
      },
    });
    // Under their standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), which
    // stock dashboards expect.
    collectDefaultMetrics({ register: registry });
  }

  /** The store's telemetry (StoreOptions.telemetry): its commits and its connection trouble. */
  readonly storeTelemetry: StoreTelemetry = {
    committed: (writes, seconds) => {
      this.storeCommitDuration.observe(seconds);
      this.storeCommitWrites.observe(writes);
    },
    trouble: (kind) => (kind === 'reconnect' ? this.redisReconnects : kind === 'timeout' ? this.storeTimeouts : this.redisCommandErrors).inc(),
    pinged: (at) => {
      this.lastStorePing = Math.max(this.lastStorePing, at);
    },
    received: (channel) => this.redisReceived[channel]++,
  };

  /** What is read from the store itself: the events it appends, and the queue depth at each scrape. */
  watchStore(store: Store): void {
    this.store = store;
    store.listen({
      appended: (events) => {
        // A producer chooses event types freely; a label per type would let it create any number
        // of series, so only the types the service itself defines are labels of their own.
        // Counted per type, then added once per type: a batch of 40 results is one increment, not 40.
        const counts = new Map<string, number>();
        for (const e of events) {
          const type = LABELLED_EVENT_TYPES.has(e.type) ? e.type : 'other';
          counts.set(type, (counts.get(type) ?? 0) + 1);
        }
        for (const [type, n] of counts) this.eventsAppended.inc({ type }, n);
      },
    });
  }

  /** The stream gauges, computed from the hub's connections at each scrape. */
  watchStreams(hub: { census(): Record<StreamKind, StreamCensus> }): void {
    const gauge = (name: string, help: string, value: (c: StreamCensus) => number) =>
      this.scraped(Gauge, name, help, ['stream'], () => {
        const census = hub.census();
        return STREAM_KINDS.map((stream): Sample => [{ stream }, value(census[stream])]);
      });
    gauge('horologium_stream_connections', 'Open stream connections.', (c) => c.connections);
    gauge('horologium_stream_subscriptions', 'Session subscriptions of the open stream connections.', (c) => c.subscriptions);
  }

  /**
   * A counter or gauge whose samples are read, whole, at each scrape from state kept elsewhere, so
   * that what it counts costs no metrics-library work when it happens.
   */
  private scraped(type: typeof Counter | typeof Gauge, name: string, help: string, labelNames: string[], samples: () => Sample[]): void {
    new type({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect(this: Counter | Gauge) {
        this.reset();
        for (const [labels, value] of samples()) {
          if (this instanceof Gauge) this.set(labels, value);
          else this.inc(labels, value);
        }
      },
    });
  }

  authFailed(surface: AuthSurface, kind: AuthFailureKind): void {
    this.authFailures.inc({ surface, kind });
  }

  /** One HTTP request answered. */
  requestDone(route: string, method: string, status: number, seconds: number): void {
    this.requests.inc({ route, method, status: String(status) });
    this.httpDuration.observe({ route, method, status_class: `${Math.floor(status / 100)}xx` }, seconds);
  }
}
