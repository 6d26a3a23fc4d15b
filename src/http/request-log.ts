/**
 * The one log line per request (never a body or a token), the request id echoed on every reply,
 * the request metrics, and the `stream refused` line of a stream that never started.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../telemetry/metrics.js';

/** Fields of the request line that routes fill in; never a body or a token. */
type RequestLogContext = { session?: string; call_id?: string; error?: string };

declare module 'fastify' {
  interface FastifyRequest {
    logContext: RequestLogContext;
  }
}

/** Health probes arrive every few seconds from every orchestrator: their lines are debug. */
const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

export function registerRequestLog(app: FastifyInstance, metrics: Metrics): void {
  app.decorateRequest('logContext', null as unknown as RequestLogContext);
  app.addHook('onRequest', async (request, reply) => {
    request.logContext = {};
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    // An upgrade answered over HTTP (refused before the handshake, or no such route) runs on a
    // socket @fastify/websocket assigned by hand, outside the HTTP server's bookkeeping: writing
    // the reply closes nothing, so end it here or its descriptor leaks.
    const upgrade = request.raw.headers.upgrade !== undefined;
    if (upgrade) request.raw.socket.end();
    // One read: Fastify builds a new routeOptions object at every read.
    const { url, config } = request.routeOptions;
    const route = url ?? 'unmatched';
    metrics.requestDone(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    const { streamKind } = config;
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
}
