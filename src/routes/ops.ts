/**
 * Operations routes: liveness and readiness (public), metrics (scope `admin` when auth is
 * configured) and the OpenAPI document (any valid token).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { openApiDocument } from '../wire/openapi.js';

/** /readyz answers within this, whatever the store does: a store that has not said by then is not ready. */
const READINESS_DEADLINE_MS = 800;

/** `work`'s value, or `fallback` when it fails or takes longer than `ms`. */
function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([work.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

export function opsRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const started = Date.now();
    const ready = await within(ctx.store.isReady(), READINESS_DEADLINE_MS, false);
    // Ready says the store takes writes; warnings say what its settings do to durability (a Redis
    // that may evict keys or has no AOF): the service works, but an operator must know.
    const warnings = ready ? ((await within(ctx.store.warnings?.() ?? Promise.resolve(undefined), Math.max(0, READINESS_DEADLINE_MS - (Date.now() - started)), undefined)) ?? []) : [];
    return reply
      .code(ready ? 200 : 503)
      .headers(ready ? {} : { 'retry-after': '1' })
      .send({ status: ready ? 'ready' : 'unavailable', store: ctx.store.kind, warnings });
  });

  app.get('/metrics', { config: { scope: 'admin' } }, async (_request, reply) => {
    const text = await ctx.metrics.registry.metrics();
    return reply.type(ctx.metrics.registry.contentType).send(text);
  });

  // Built at the first request, not at start-up: zod's JSON Schema conversion takes ~60 ms.
  let openapi: string | undefined;
  app.get('/openapi.json', { config: { scope: 'any' } }, async (_request, reply) => {
    openapi ??= JSON.stringify(openApiDocument());
    return reply.type('application/json; charset=utf-8').send(openapi);
  });
}
