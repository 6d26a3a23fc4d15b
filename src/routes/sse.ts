/**
 * GET /v1/sessions/{session}/sse (docs/protocol.md section 10): one session's events as
 * Server-Sent Events, for clients that cannot open a WebSocket. Where to start comes from
 * `Last-Event-ID` (`<epoch>:<seq>` or a bare `<seq>`), else `?since=` and `?epoch=`; the replay then
 * live rule and the buffer limit are the WebSocket's own (hub/connection.ts over an SseTransport).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { HorologiumError } from '../errors.js';
import { Connection } from '../hub/connection.js';
import { SseTransport } from '../hub/sse-transport.js';
import { sseQuerySchema } from '../wire/schemas.js';
import { validate } from './json-body.js';
import { sessionOf } from './params.js';

/** Where a resume starts: `<epoch>:<seq>` or `<seq>`; undefined when the header is malformed. */
export function parseLastEventId(value: string): { since: number; epoch?: string } | undefined {
  const m = /^(?:(.{1,256}):)?([0-9]{1,15})$/.exec(value.trim());
  if (!m) return undefined;
  return { since: Number(m[2]), ...(m[1] === undefined ? {} : { epoch: m[1] }) };
}

export function sseRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store, hub, config } = ctx;

  app.get('/v1/sessions/:session/sse', { config: { scope: 'subscribe', tokenInQuery: true } }, async (request, reply) => {
    const session = sessionOf(request);
    const query = validate(sseQuerySchema, request.query, 'INVALID_QUERY');
    const header = request.headers['last-event-id'];
    let start: { since?: number; epoch?: string } = { ...(query.since === undefined ? {} : { since: query.since }), ...(query.epoch === undefined ? {} : { epoch: query.epoch }) };
    if (typeof header === 'string' && header !== '') {
      const resumed = parseLastEventId(header);
      if (!resumed) throw new HorologiumError('BAD_REQUEST', 'Last-Event-ID must be <epoch>:<seq> or <seq>.');
      start = resumed;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Proxies that buffer responses (nginx) pass this stream through as it is written.
      'x-accel-buffering': 'no',
    });
    const connection = new Connection(new SseTransport(res), store, hub, { maxBufferedBytes: config.maxBufferedBytes, maxSubscriptions: 1 });
    hub.attach(connection);
    res.on('close', () => {
      connection.dispose();
      hub.detach(connection);
    });
    connection.enqueue(() => connection.subscribe(session, start.since, start.epoch));
  });
}
