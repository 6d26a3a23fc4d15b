/**
 * The model-side consumer's routes (docs/protocol.md section 4, scope `consume`): read and ack,
 * and one call's complete result by its call_id (what a panel's "Full result" loads).
 */
import type { FastifyInstance } from 'fastify';
import { HorologiumError } from '../common/errors.js';
import type { AppContext } from '../app-context.js';
import { queuePageReply } from '../wire/queue-reply.js';
import { ackBodySchema, queueQuerySchema } from '../wire/schemas.js';
import { objectBody, validate, validBody } from '../http/json-body.js';
import { sessionOf } from '../http/params.js';

export function queueRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store, queueWatch } = ctx;

  app.get('/v1/sessions/:session/queue', { config: { scope: 'consume' } }, async (request, reply) => {
    const session = sessionOf(request);
    const query = validate(queueQuerySchema, request.query, 'INVALID_QUERY');
    let page = await store.readQueue(session, query.after, query.limit);
    if (page.entries.length === 0 && query.wait > 0) {
      const deadline = Date.now() + query.wait * 1000;
      // Watching before reading again: an entry committed after that read wakes the wait.
      const wait = await queueWatch.open(session);
      try {
        page = await store.readQueue(session, query.after, query.limit);
        while (page.entries.length === 0 && Date.now() < deadline) {
          const more = await wait.grownPast(Math.max(query.after ?? page.committed, page.head), deadline - Date.now());
          page = await store.readQueue(session, query.after, query.limit);
          if (!more) break; // Shutting down: answered with what is there now.
        }
      } finally {
        wait.close();
      }
    }
    return reply.code(200).type('application/json; charset=utf-8').send(queuePageReply(page));
  });

  app.get('/v1/sessions/:session/tool-results/:call_id', { config: { scope: 'consume' } }, async (request, reply) => {
    const session = sessionOf(request);
    const callId = (request.params as { call_id: string }).call_id;
    const entry = await store.toolResult(session, callId);
    if (!entry) throw new HorologiumError('RESULT_NOT_FOUND', `Session ${session} has no stored result for call_id ${callId} (never posted, or removed by retention).`);
    // The result's JSON text as stored: the bytes the model route holds.
    return reply.code(200).type('application/json; charset=utf-8').header('x-horologium-queue-seq', String(entry.queueSeq)).send(entry.result);
  });

  app.post('/v1/sessions/:session/queue/ack', { config: { scope: 'consume' } }, async (request, reply) => {
    const session = sessionOf(request);
    const { through } = validBody(objectBody(request), ackBodySchema);
    const outcome = await store.ack(session, through);
    if (outcome.status === 'beyond_head') {
      throw new HorologiumError('ACK_BEYOND_HEAD', `Cannot acknowledge through ${through}: the queue's head is ${outcome.head}.`);
    }
    return reply.code(200).send({ committed: outcome.committed });
  });
}
