/**
 * Operations routes: liveness and readiness (public), metrics (scope `admin` when auth is
 * configured) and the OpenAPI document (any valid token).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { openApiDocument } from '../wire/openapi.js';

export function opsRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const ready = await ctx.store.isReady().catch(() => false);
    // Ready says the store takes writes; warnings say what its settings do to durability (a Redis
    // that may evict keys or has no AOF): the service works, but an operator must know.
    const warnings = ready ? ((await ctx.store.warnings?.().catch(() => undefined)) ?? []) : [];
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
