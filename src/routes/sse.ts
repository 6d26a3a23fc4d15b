/**
 * The Server-Sent Events streams of one session, for clients that cannot open a WebSocket:
 * - GET /v1/sessions/{session}/sse (docs/protocol.md section 10), the status frames;
 * - GET /v1/sessions/{session}/ag-ui and POST /v1/ag-ui (section 11), the same events as AG-UI;
 * - GET /v1/sessions/{session}/ui-message-stream (section 13), the AI SDK's UI message stream.
 * Where to start comes from `Last-Event-ID` (`<epoch>:<seq>` or a bare `<seq>`), else the query
 * (or, for POST /v1/ag-ui, `forwardedProps.since`/`epoch`, else everything retained). The replay
 * then live rule and the buffer limit are the WebSocket's own: stream/connection.ts over an
 * SseTransport.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { authorizeCounted } from '../auth/guard.js';
import { HorologiumError } from '../common/errors.js';
import { SseTransport } from '../stream/sse-transport.js';
import type { AgUiCatchUp } from '../wire/ag-ui.js';
import type { Store } from '../store/types.js';
import type { StreamKind } from '../wire/stream-kinds.js';
import { uiMessageStreamFormat } from '../wire/ui-message-stream.js';
import { agUiQuerySchema, SESSION_ID, sseQuerySchema } from '../wire/schemas.js';
import { STATUS_STREAM, type SseFormat } from '../wire/sse.js';
import { objectBody, validate } from '../http/json-body.js';
import { sessionOf } from '../http/params.js';
import { lazily } from '../common/lazily.js';

type SseStreamKind = Exclude<StreamKind, 'ws'>;

interface Start {
  since?: number;
  epoch?: string;
}

/** Where a resume starts: `<epoch>:<seq>` or `<seq>`; undefined when the header is malformed. */
export function parseLastEventId(value: string): Start | undefined {
  const m = /^(?:(.{1,256}):)?([0-9]{1,15})$/.exec(value.trim());
  if (!m) return undefined;
  return { since: Number(m[2]), ...(m[1] === undefined ? {} : { epoch: m[1] }) };
}

/** `Last-Event-ID` when the request has one (what EventSource sends on reconnect), else `fallback`. */
function startOf(request: FastifyRequest, fallback: Start): Start {
  const header = request.headers['last-event-id'];
  if (typeof header !== 'string' || header === '') return fallback;
  const resumed = parseLastEventId(header);
  if (!resumed) throw new HorologiumError('BAD_REQUEST', 'Last-Event-ID must be <epoch>:<seq> or <seq>.');
  return resumed;
}

function queryStart(request: FastifyRequest): Start {
  const query = validate(sseQuerySchema, request.query, 'INVALID_QUERY');
  return { ...(query.since === undefined ? {} : { since: query.since }), ...(query.epoch === undefined ? {} : { epoch: query.epoch }) };
}

/**
 * AG-UI's modules (its encoder, its zod schemas and the snapshot), loaded at the first AG-UI request:
 * a server nobody asks for AG-UI starts without them.
 */
const agUi = lazily(async () => {
  const [{ agUiFormat }, { AgUiSnapshot }, { RunAgentInputSchema }] = await Promise.all([
    import('../wire/ag-ui.js'),
    import('../wire/ag-ui-snapshot.js'),
    import('@ag-ui/core/schemas'),
  ]);
  return { agUiFormat, AgUiSnapshot, RunAgentInputSchema };
});

/** Events read per page while a snapshot is built. */
const SNAPSHOT_PAGE = 1000;

/**
 * The AG-UI catch-up of everything the session retains (docs/protocol.md section 11, "Snapshot"),
 * and where the stream goes on after it: the last event it includes, under its epoch.
 */
async function agUiCatchUp(store: Store, session: string): Promise<{ catchUp: AgUiCatchUp; start: Start }> {
  const snapshot = new (await agUi()).AgUiSnapshot();
  let page = await store.readEvents(session, 0, SNAPSHOT_PAGE);
  const epoch = page.epoch;
  let seq = 0;
  for (;;) {
    for (const e of page.events) {
      snapshot.apply(e.frame);
      seq = e.seq;
    }
    if (page.events.length < SNAPSHOT_PAGE) break;
    page = await store.readEvents(session, seq, SNAPSHOT_PAGE);
    // The log started again under a new epoch meanwhile: the stream's subscribe tells it.
    if (page.epoch !== epoch) break;
  }
  return { catchUp: { event: snapshot.event(), ...(seq > 0 ? { id: `${epoch}:${seq}` } : {}) }, start: { since: seq, epoch } };
}

export function sseRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { hub, config, metrics, store } = ctx;

  /** Answers with an event stream of `session` in `format`, from `start`. */
  const stream = (reply: FastifyReply, session: string, start: Start, format: SseFormat, kind: SseStreamKind): void => {
    const { request } = reply;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      // What the hooks set so far (X-Request-Id, the CORS headers an EventSource on another origin needs).
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Proxies that buffer responses (nginx) pass this stream through as it is written.
      'x-accel-buffering': 'no',
      ...format.headers,
    });
    const connection = hub.open(new SseTransport(res, format), {
      kind,
      log: request.log,
      address: request.ip,
      principal: request.principal?.id,
      limits: { maxBufferedBytes: config.maxBufferedBytes, maxSubscriptions: 1 },
    });
    connection.enqueue(() => connection.subscribe(session, start.since, start.epoch));
  };

  const sseConfig = (streamKind: SseStreamKind) => ({ config: { scope: 'subscribe' as const, tokenInQuery: true, streamKind } });

  app.get('/v1/sessions/:session/sse', sseConfig('sse'), async (request, reply) => {
    const session = sessionOf(request);
    stream(reply, session, startOf(request, queryStart(request)), STATUS_STREAM, 'sse');
  });

  app.get('/v1/sessions/:session/ag-ui', sseConfig('ag_ui'), async (request, reply) => {
    const session = sessionOf(request);
    const query = validate(agUiQuerySchema, request.query, 'INVALID_QUERY');
    const { agUiFormat } = await agUi();
    if (query.snapshot === '1') {
      const { catchUp, start } = await agUiCatchUp(store, session);
      stream(reply, session, start, agUiFormat(session, randomUUID(), catchUp), 'ag_ui');
      return;
    }
    stream(reply, session, startOf(request, queryStart(request)), agUiFormat(session, randomUUID()), 'ag_ui');
  });

  // The AI SDK's UI message stream: the whole session unless a resume says where to start.
  app.get('/v1/sessions/:session/ui-message-stream', sseConfig('ui_message'), async (request, reply) => {
    const session = sessionOf(request);
    const query = queryStart(request);
    stream(reply, session, startOf(request, query.since === undefined ? { ...query, since: 0 } : query), uiMessageStreamFormat(session), 'ui_message');
  });

  // What AG-UI's HttpAgent sends: a RunAgentInput whose threadId is the session.
  app.post('/v1/ag-ui', { config: { scope: 'subscribe', streamKind: 'ag_ui' } }, async (request, reply) => {
    const { agUiFormat, RunAgentInputSchema } = await agUi();
    const parsed = RunAgentInputSchema.safeParse(JSON.parse(objectBody(request).doc.text));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HorologiumError('INVALID_BODY', `Invalid body: not an AG-UI RunAgentInput (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}).`);
    }
    const input = parsed.data;
    if (!SESSION_ID.test(input.threadId)) throw new HorologiumError('INVALID_SESSION_ID', `threadId is the session id and must match ${SESSION_ID.source}.`);
    request.logContext.session = input.threadId;
    authorizeCounted(request.principal as NonNullable<typeof request.principal>, 'subscribe', input.threadId, 'ag_ui', (surface, kind) => metrics.authFailed(surface, kind));
    const props = (input.forwardedProps ?? {}) as { since?: unknown; epoch?: unknown; snapshot?: unknown };
    const runId = input.runId || randomUUID();
    if (props.snapshot === true) {
      const { catchUp, start } = await agUiCatchUp(store, input.threadId);
      stream(reply, input.threadId, start, agUiFormat(input.threadId, runId, catchUp), 'ag_ui');
      return;
    }
    const since = typeof props.since === 'number' && Number.isSafeInteger(props.since) && props.since >= 0 ? props.since : 0;
    const fallback: Start = { since, ...(typeof props.epoch === 'string' ? { epoch: props.epoch } : {}) };
    stream(reply, input.threadId, startOf(request, fallback), agUiFormat(input.threadId, runId), 'ag_ui');
  });
}
