/**
 * Prometheus metrics (prom-client), every name prefixed `horologium_`. One registry per app, so
 * that tests can build several apps in one process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Store } from './store/types.js';

const LABELLED_EVENT_TYPES: ReadonlySet<string> = new Set(['tool_starting', 'tool_completed']);

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

  constructor(store: Store) {
    const registry = this.registry;
    new Gauge({
      name: 'horologium_queue_depth',
      help: 'Unacknowledged model queue entries across all sessions.',
      registers: [registry],
      async collect() {
        // An unreachable store must not turn /metrics into a 500; the gauge keeps its last value.
        const depth = await store.queueDepth().catch(() => undefined);
        if (depth !== undefined) this.set(depth);
      },
    });
    // Under their standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), which
    // stock dashboards expect.
    collectDefaultMetrics({ register: registry });
    store.listen({
      events: (events) => {
        // A producer chooses event types freely; a label per type would let it create any number
        // of series, so only the types the service itself defines are labels of their own.
        for (const e of events) this.eventsAppended.inc({ type: LABELLED_EVENT_TYPES.has(e.type) ? e.type : 'other' });
      },
    });
  }
}
