/**
 * buildApp(config): the whole service as one Fastify instance, testable without a port. The
 * process concerns (listen, signals) live in server.ts.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { AppContext } from './app-context.js';
import type { Config } from './config.js';
import { clientErrorHandler } from './client-errors.js';
import { errorBody, HorologiumError } from './errors.js';
import { Metrics } from './metrics.js';
import { trackAllowedMethods } from './routes/allowed-methods.js';
import { registerJsonBodyParser } from './routes/json-body.js';
import { Authenticator } from './auth/authenticator.js';
import { registerAuthGuard } from './auth/guard.js';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import { OriginPolicy } from './auth/origin-policy.js';
import { eventRoutes } from './routes/events.js';
import { ingestRoutes } from './routes/ingest.js';
import { opsRoutes } from './routes/ops.js';
import { panelRoutes } from './routes/panel.js';
import { queueRoutes } from './routes/queue.js';
import { sessionRoutes } from './routes/sessions.js';
import { sseRoutes } from './routes/sse.js';
import { streamRoutes } from './routes/stream.js';
import { Hub } from './hub/hub.js';
import { SessionWatch } from './hub/session-watch.js';
import { createStore } from './store/index.js';
import { QueueWatch } from './store/queue-watch.js';
import { Retention } from './store/retention.js';
import { StoreUnavailableError, type Store } from './store/types.js';

/** Fields of the one log line written per request; never a body or a token. */
type RequestLogContext = { session?: string; call_id?: string; error?: string };

/** An `X-Request-Id` a caller (or a proxy) may give: kept when it looks like an id, else replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

/** Health probes arrive every few seconds from every orchestrator: their lines are debug. */
const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

declare module 'fastify' {
  interface FastifyRequest {
    logContext: RequestLogContext;
  }
  interface FastifyInstance {
    horologium: AppContext;
  }
}

/** Fastify's own 4xx errors, mapped onto the catalog. */
const FASTIFY_CODES: Record<string, HorologiumError['code']> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * LOG_FORMAT=pretty: pino-pretty in pino's transport thread. It is a dev dependency, resolved only
 * when asked for, so production start-up never loads it; where it is missing, start-up says so.
 */
function prettyTransport(): { target: string; options: Record<string, unknown> } {
  let target: string;
  try {
    target = createRequire(import.meta.url).resolve('pino-pretty');
  } catch {
    throw new Error('LOG_FORMAT=pretty needs pino-pretty, which is not installed (npm install pino-pretty), or pipe the JSON lines through `npx pino-pretty`');
  }
  return { target, options: { colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } };
}

/** 16777216 → "16 MiB": how a limit is said to a person. */
function sizeInWords(bytes: number): string {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}

export interface BuildOptions {
  /** A store to use instead of the one HOROLOGIUM_STORE names (tests inject clocks this way). */
  store?: Store;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(config.logFormat === 'pretty' ? { transport: prettyTransport() } : {}),
      // The request line below is the only per-request log; headers and URLs (which may carry a
      // token) are never logged.
      serializers: { req: () => ({}), res: () => ({}) },
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // Long ids are validated by the routes, with the section 4 envelope.
    routerOptions: { maxParamLength: 1024 },
    forceCloseConnections: 'idle',
    // Requests that arrive while the server closes get the envelope (SHUTTING_DOWN, below), not
    // Fastify's own 503 body.
    return503OnClosing: false,
    // Unique across instances and restarts (a per-process counter repeats); a caller's own id is
    // kept so one id follows a request through a proxy and into these logs.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy.join(',') : false,
    // A request (headers and body) must arrive within a minute: slow partial requests cannot
    // hold a connection for ever.
    requestTimeout: 60_000,
    clientErrorHandler,
    // A URL Fastify's router cannot decode (bad percent-encoding) gets the envelope too.
    frameworkErrors: (_error, _request, reply) => {
      void (reply as FastifyReply)
        .code(400)
        .type('application/json; charset=utf-8')
        .send(errorBody('BAD_REQUEST', 'The URL is not valid (check its percent-encoding).'));
    },
  });

  const authenticator = new Authenticator(config.auth);
  const store = options.store ?? createStore(config.store, { historySize: config.historySize });
  await store.open();
  for (const warning of (await store.warnings?.()) ?? []) app.log.warn({ store: store.kind, warning: warning.code }, warning.message);
  const metrics = new Metrics(store);
  const queueWatch = new QueueWatch(store);
  const hub = new Hub(store, config.heartbeatMs, metrics.streams);
  metrics.watchStreams(hub);
  const retention = new Retention(store, config, (slice) => {
    metrics.retentionEntriesRemoved.inc(slice.entriesRemoved);
    metrics.retentionSessionsRemoved.inc(slice.sessionsRemoved);
  });
  retention.start(config.retentionIntervalMs);
  const sessionWatch = new SessionWatch(store);
  const ctx: AppContext = { config, authenticator, store, metrics, queueWatch, hub, sessionWatch, retention };
  app.decorate('horologium', ctx);
  app.decorateRequest('logContext', null as unknown as RequestLogContext);

  // Shutdown (SIGTERM): from the first preClose hook on, a new request is refused with the envelope
  // and Retry-After, and every reply, in flight or refused, closes its connection once it is sent,
  // so that the server's close does not wait on keep-alive connections that were busy at SIGTERM.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    request.logContext = {};
    reply.header('x-request-id', request.id);
    if (closing) throw new HorologiumError('SHUTTING_DOWN', undefined, [], { 'retry-after': '1' });
  });
  app.addHook('onSend', async (request, reply) => {
    if (closing && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
  });

  const allowedMethods = trackAllowedMethods(app);
  /** 404, or 405 with Allow for a known path asked with another method. */
  const noRoute = (url: string): HorologiumError => {
    const path = url.split('?')[0] as string;
    const allowed = allowedMethods(path);
    if (allowed.length === 0) return new HorologiumError('NOT_FOUND');
    return new HorologiumError('METHOD_NOT_ALLOWED', `${path} accepts ${allowed.join(', ')}.`, [], { allow: allowed.join(', ') });
  };

  // Browser pages: an origin the policy refuses gets 403 before anything else (the WebSocket
  // upgrade included); the others get CORS headers (auth/origin-policy.ts).
  const origins = new OriginPolicy({ ...(config.allowedOrigins ? { allowedOrigins: config.allowedOrigins } : {}), authEnabled: authenticator.enabled, insecure: config.insecure });
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.allows(origin, request.headers.host)) throw new HorologiumError('FORBIDDEN', origins.refusal);
    // OPTIONS is answered only as a CORS preflight; any other OPTIONS is a method no route accepts.
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined) throw noRoute(request.url);
  });
  app.addHook('onResponse', async (request, reply) => {
    // An upgrade answered over HTTP (refused before the handshake, or no such route) runs on a
    // socket @fastify/websocket assigned by hand, outside the HTTP server's bookkeeping: writing
    // the reply closes nothing, so end it here or its descriptor leaks.
    const upgrade = request.raw.headers.upgrade !== undefined;
    if (upgrade) request.raw.socket.end();
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestDone(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    const { streamKind } = request.routeOptions.config;
    // A stream that never started (the WebSocket's upgrade, or an SSE request, answered with an error).
    if (streamKind !== undefined && reply.statusCode >= 400 && (upgrade || streamKind !== 'ws')) {
      const code = request.logContext?.error ?? String(reply.statusCode);
      metrics.streamRefused.inc({ stream: streamKind, code });
      request.log.info({ stream: streamKind, address: request.ip, status: reply.statusCode, code }, 'stream refused');
    }
    request.log[PROBE_ROUTES.has(route) ? 'debug' : 'info'](
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        req_bytes: Number(request.headers['content-length'] ?? 0),
        res_bytes: Number(reply.getHeader('content-length') ?? 0),
        ...request.logContext,
      },
      'request',
    );
  });

  registerJsonBodyParser(app);
  registerAuthGuard(app, authenticator, (surface, kind) => metrics.authFailed(surface, kind));
  if (authenticator.enabled && config.rateLimit > 0) {
    // After the guard's hook, so the key is the token (its principal id), never the address.
    await app.register(rateLimit, {
      global: true,
      max: config.rateLimit,
      timeWindow: 1000,
      keyGenerator: (request) => request.principal?.id ?? request.ip,
      allowList: (request) => request.principal === undefined,
      errorResponseBuilder: (_request, context) =>
        new HorologiumError('RATE_LIMITED', `More than ${context.max} requests per second with this token; retry after ${context.after}.`),
    });
  }

  /** Every error reply: the catalog entry's envelope, with the status it names unless overridden. */
  const sendError = (reply: FastifyReply, e: HorologiumError, status = e.status) => {
    // The request line names the code of every error reply.
    if (reply.request.logContext) reply.request.logContext.error = e.code;
    return reply.code(status).headers(e.headers).type('application/json; charset=utf-8').send(errorBody(e.code, e.message, e.details));
  };

  app.setErrorHandler((error: FastifyError | HorologiumError, request, reply) => {
    if (error instanceof HorologiumError) return sendError(reply, error);
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error.message }, 'store unavailable');
      return sendError(reply, new HorologiumError('STORE_UNAVAILABLE', undefined, [], { 'retry-after': '1' }));
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped === 'BODY_TOO_LARGE') {
      return sendError(reply, new HorologiumError(mapped, `The request body is larger than the limit of ${config.bodyLimit} bytes (${sizeInWords(config.bodyLimit)}, HOROLOGIUM_BODY_LIMIT).`));
    }
    if (mapped) return sendError(reply, new HorologiumError(mapped));
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) return sendError(reply, new HorologiumError('BAD_REQUEST'), status);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new HorologiumError('INTERNAL'));
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, noRoute(request.url)));
  // After the error handler, so that its preflight route's errors get the envelope too.
  await app.register(cors, {
    // Every origin that gets this far is allowed: reflect it.
    origin: true,
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id'],
    exposedHeaders: ['x-request-id', 'retry-after', 'www-authenticate'],
    maxAge: 600,
  });

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
  });
  return app;
}
