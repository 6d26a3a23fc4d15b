/**
 * Requests during shutdown (SIGTERM): from the first preClose hook on, a new request is refused with
 * the envelope and Retry-After, and every reply, in flight or refused, closes its connection once it
 * is sent, so that the server's close does not wait on keep-alive connections that were busy at
 * SIGTERM.
 */
import type { FastifyInstance } from 'fastify';
import { HorologiumError } from '../common/errors.js';

export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing) throw new HorologiumError('SHUTTING_DOWN', undefined, [], { 'retry-after': '1' });
  });
  app.addHook('onSend', async (request, reply) => {
    if (closing && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
  });
}
