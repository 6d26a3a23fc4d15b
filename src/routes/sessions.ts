/**
 * Sessions (docs/protocol.md section 9): the list of the sessions a token covers, most recently
 * active first; one session's summary; deletion (scope admin), which every subscriber hears of.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { coversSession } from '../auth/principal.js';
import { HorologiumError } from '../common/errors.js';
import { sessionSummaryJson } from '../wire/sessions.js';
import { sessionsQuerySchema } from '../wire/schemas.js';
import { validate } from '../http/json-body.js';
import { sessionOf } from '../http/params.js';

export function sessionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store } = ctx;

  app.get('/v1/sessions', { config: { scope: 'subscribe' } }, async (request) => {
    const query = validate(sessionsQuerySchema, request.query, 'INVALID_QUERY');
    const principal = request.principal;
    const page = await store.listSessions({
      limit: query.limit,
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      ...(query.prefix === undefined ? {} : { prefix: query.prefix }),
      ...(query.state === undefined ? {} : { state: query.state }),
      covers: (session) => principal !== undefined && coversSession(principal, session),
    });
    return { sessions: page.sessions.map(sessionSummaryJson), next: page.next };
  });

  app.get('/v1/sessions/:session', { config: { scope: 'subscribe' } }, async (request) => {
    const session = sessionOf(request);
    const summary = await store.sessionSummary(session);
    if (!summary) throw new HorologiumError('SESSION_NOT_FOUND', `There is no session ${session}.`);
    return sessionSummaryJson(summary);
  });

  app.delete('/v1/sessions/:session', { config: { scope: 'admin' } }, async (request) => {
    const session = sessionOf(request);
    const openCalls = await store.deleteSession(session);
    if (!openCalls) throw new HorologiumError('SESSION_NOT_FOUND', `There is no session ${session}.`);
    ctx.toolSpans?.abandoned(openCalls);
    return { session, deleted: true };
  });
}
