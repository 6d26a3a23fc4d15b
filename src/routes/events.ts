/** HTTP replay of a session's event log (docs/protocol.md section 4, scope `subscribe`). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { eventsQuerySchema } from '../wire/schemas.js';
import { validate } from '../http/json-body.js';
import { sessionOf } from '../http/params.js';

export function eventRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/v1/sessions/:session/events', { config: { scope: 'subscribe' } }, async (request, reply) => {
    const session = sessionOf(request);
    const query = validate(eventsQuerySchema, request.query, 'INVALID_QUERY');
    const page = await ctx.store.readEvents(session, query.after, query.limit);
    // Each event is the very frame the WebSocket sends, spliced in as stored.
    const body =
      `{"session":${JSON.stringify(page.session)},"epoch":${JSON.stringify(page.epoch)},"head":${page.head},` +
      `"oldest":${page.oldest},"events":[${page.events.map((e) => e.frame).join(',')}]}`;
    return reply.code(200).type('application/json; charset=utf-8').send(body);
  });
}
