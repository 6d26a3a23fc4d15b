import type { FastifyRequest } from 'fastify';
import { HorologiumError } from '../common/errors.js';
import { SESSION_ID } from '../wire/schemas.js';

/** The `{session}` path parameter, validated (docs/protocol.md section 1). */
export function sessionOf(request: FastifyRequest): string {
  const session = (request.params as { session?: string }).session ?? '';
  if (!SESSION_ID.test(session)) throw new HorologiumError('INVALID_SESSION_ID');
  request.logContext.session = session;
  return session;
}
