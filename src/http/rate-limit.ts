/**
 * Requests per second per token (HOROLOGIUM_RATE_LIMIT) when auth is configured: @fastify/rate-limit,
 * registered after the auth guard's hook so the key is the token's principal, never the address.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { HorologiumError } from '../common/errors.js';

export async function registerRateLimit(app: FastifyInstance, perSecond: number): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: perSecond,
    timeWindow: 1000,
    keyGenerator: (request) => request.principal?.id ?? request.ip,
    allowList: (request) => request.principal === undefined,
    errorResponseBuilder: (_request, context) =>
      new HorologiumError('RATE_LIMITED', `More than ${context.max} requests per second with this token; retry after ${context.after}.`),
  });
}
