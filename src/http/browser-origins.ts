/**
 * Browser pages (docs/panel.md, "Origins"): a request whose Origin the policy refuses gets 403 before
 * anything else runs (the WebSocket upgrade included); an OPTIONS that is not a CORS preflight is a
 * method no route takes; accepted cross-origin requests get CORS headers (@fastify/cors).
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { OriginPolicy } from '../auth/origin-policy.js';
import { HorologiumError } from '../common/errors.js';

export function registerOriginCheck(app: FastifyInstance, origins: OriginPolicy, noRoute: (url: string) => HorologiumError): void {
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.allows(origin, request.headers.host)) throw new HorologiumError('FORBIDDEN', origins.refusal);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined) throw noRoute(request.url);
  });
}

/** After the error handler, so that the preflight route's errors get the envelope too. */
export async function registerCors(app: FastifyInstance): Promise<void> {
  await app.register(cors, {
    // Every origin that gets this far is allowed: reflect it.
    origin: true,
    // As the header values themselves: given as lists, the plugin joins them again for every request.
    methods: 'GET, POST, DELETE',
    allowedHeaders: 'authorization, content-type, last-event-id, x-request-id',
    exposedHeaders: 'x-request-id, retry-after, www-authenticate',
    maxAge: 600,
  });
}
