/**
 * buildApp(config): the whole service as one Fastify instance, testable without a port: the
 * application's parts, the HTTP plumbing (src/http/), the routes, and shutdown in one place. The
 * process concerns (listen, signals) live in run-server.ts.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from './app-context.js';
import { Authenticator } from './auth/authenticator.js';
import { registerAuthGuard } from './auth/guard.js';
import { OriginPolicy } from './auth/origin-policy.js';
import type { Config } from './config/config.js';
import { noRouteError, trackAllowedMethods } from './http/allowed-methods.js';
import { registerCors, registerOriginCheck } from './http/browser-origins.js';
import { registerErrorReplies } from './http/error-replies.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerRateLimit } from './http/rate-limit.js';
import { registerRequestLog } from './http/request-log.js';
import { serverOptions } from './http/server-options.js';
import { refuseWhileClosing } from './http/shutdown.js';
import { Hub } from './stream/hub.js';
import { SessionWatch } from './stream/session-watch.js';
import { Metrics } from './telemetry/metrics.js';
import { ToolSpans } from './telemetry/tool-spans.js';
import { VERSION } from './common/version.js';
import { eventRoutes } from './routes/events.js';
import { ingestRoutes } from './routes/ingest.js';
import { opsRoutes } from './routes/ops.js';
import { panelRoutes } from './routes/panel.js';
import { queueRoutes } from './routes/queue.js';
import { sessionRoutes } from './routes/sessions.js';
import { sseRoutes } from './routes/sse.js';
import { streamRoutes } from './routes/stream.js';
import { createStore } from './store/index.js';
import { QueueWatch } from './store/queue-watch.js';
import { Retention } from './store/retention.js';
import type { Store } from './store/types.js';

export interface BuildOptions {
  /** A store to use instead of the one HOROLOGIUM_STORE names (tests inject clocks this way). */
  store?: Store;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config));

  const authenticator = new Authenticator(config.auth);
  const metrics = new Metrics();
  const store = options.store ?? await createStore(config.store, { historySize: config.historySize, telemetry: metrics.storeTelemetry, waitReplicas: config.redisWaitReplicas, timeoutMs: config.storeTimeoutMs, ...(config.redisNatMap ? { natMap: config.redisNatMap } : {}) });
  // The store opens (SQLite's writer thread starts, Redis connects) while the routes are registered
  // below; nothing reads or writes it before buildApp returns.
  const opening = store.open();
  opening.catch(() => undefined);
  metrics.watchStore(store);
  const queueWatch = new QueueWatch(store);
  const hub = new Hub(store, config.heartbeatMs, metrics.streams);
  metrics.watchStreams(hub);
  const toolSpans = config.tracing ? await ToolSpans.open(config.tracing, VERSION) : undefined;
  const retention = new Retention(store, config, (slice) => {
    metrics.retentionEntriesRemoved.inc(slice.entriesRemoved);
    metrics.retentionSessionsRemoved.inc(slice.sessionsRemoved);
    toolSpans?.abandoned(slice.openCalls);
  });
  const sessionWatch = new SessionWatch(store);
  const ctx: AppContext = { config, authenticator, store, metrics, queueWatch, hub, sessionWatch, retention, toolSpans };
  app.decorate('horologium', ctx);

  // The plumbing, in the order its hooks must run: the request line and id, the shutdown refusal,
  // the browser-origin check, body parsing, the auth guard and then (keyed by its principal) the
  // rate limit; the error envelope, and CORS after it.
  registerRequestLog(app, metrics);
  refuseWhileClosing(app);
  const allowedMethods = trackAllowedMethods(app);
  const noRoute = (url: string) => noRouteError(allowedMethods, url);
  const origins = new OriginPolicy({ ...(config.allowedOrigins ? { allowedOrigins: config.allowedOrigins } : {}), authEnabled: authenticator.enabled, insecure: config.insecure });
  registerOriginCheck(app, origins, noRoute);
  registerJsonBodyParser(app);
  registerAuthGuard(app, authenticator, (surface, kind) => metrics.authFailed(surface, kind));
  if (authenticator.enabled && config.rateLimit > 0) await registerRateLimit(app, config.rateLimit);
  registerErrorReplies(app, config.bodyLimit, noRoute);
  await registerCors(app);

  ingestRoutes(app, ctx);
  queueRoutes(app, ctx);
  eventRoutes(app, ctx);
  sessionRoutes(app, ctx);
  sseRoutes(app, ctx);
  opsRoutes(app, ctx);
  await panelRoutes(app, config);
  await streamRoutes(app, ctx);

  // Shutdown ends what the app started, in one place: every stream client (WebSocket, SSE, AG-UI)
  // is sent 1001 and its close logged, long-polls return, the sweeps stop; then the store closes.
  app.addHook('preClose', async () => {
    await hub.closeAll();
    queueWatch.close();
    sessionWatch.close();
    await retention.stop();
  });
  app.addHook('onClose', async () => {
    await store.close();
    // After the last request: its span is in the batch the exporter sends now.
    await toolSpans?.close();
  });
  try {
    await opening;
  } catch (err) {
    await toolSpans?.close();
    throw err;
  }
  for (const warning of (await store.warnings?.()) ?? []) app.log.warn({ store: store.kind, warning: warning.code }, warning.message);
  retention.start(config.retentionIntervalMs);
  return app;
}
