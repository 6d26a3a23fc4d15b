/** What the route plugins share: one object built by buildApp, no module-level state. */
import type { Authenticator } from './auth/authenticator.js';
import type { Config } from './config/config.js';
import type { Hub } from './stream/hub.js';
import type { SessionWatch } from './stream/session-watch.js';
import type { Metrics } from './telemetry/metrics.js';
import type { ToolSpans } from './telemetry/tool-spans.js';
import type { QueueWatch } from './store/queue-watch.js';
import type { Retention } from './store/retention.js';
import type { Store } from './store/types.js';

export interface AppContext {
  config: Config;
  authenticator: Authenticator;
  store: Store;
  metrics: Metrics;
  queueWatch: QueueWatch;
  /** The stream's fan-out, shared by every stream route. */
  hub: Hub;
  /** The stream's watch_sessions. */
  sessionWatch: SessionWatch;
  /** The background retention sweep (HOROLOGIUM_RETAIN_ACKED, HOROLOGIUM_SESSION_TTL). */
  retention: Retention;
  /** Tool executions as OpenTelemetry spans; undefined while tracing is off (OTEL_TRACES_EXPORTER unset). */
  toolSpans: ToolSpans | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's shared parts, for plugins that are handed only the instance. */
    horologium: AppContext;
  }
}
