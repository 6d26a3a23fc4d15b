/**
 * JSON Schemas of the wire (from the zod sources in wire.ts) and the OpenAPI 3.1 document built on
 * them. schemas/*.json are these schemas, written by `npm run schemas`.
 */
import { z } from 'zod';
import { PUBLISHED } from './schemas.js';

type Name = keyof typeof PUBLISHED;

/** Request bodies and queries are described as clients send them; the rest as the server sends. */
const INPUTS: ReadonlySet<Name> = new Set([
  'tool-call-body',
  'tool-result-body',
  'event-body',
  'ack-body',
  'queue-query',
  'events-query',
  'sessions-query',
  'sse-query',
  'ag-ui-query',
  'subscribe-message',
  'unsubscribe-message',
  'auth-message',
]);

export function jsonSchemas(): Record<Name, Record<string, unknown>> {
  const out = {} as Record<Name, Record<string, unknown>>;
  for (const [name, schema] of Object.entries(PUBLISHED) as Array<[Name, z.ZodType]>) {
    out[name] = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io: INPUTS.has(name) ? 'input' : 'output',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
  }
  return out;
}

const ref = (name: Name) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: Name) => ({ content: { 'application/json': { schema: ref(name) } } });
const sessionParam = {
  name: 'session',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' },
};
const lastEventId = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description: 'Where to resume: <epoch>:<seq> or <seq> (what EventSource sends); wins over since and epoch.',
  schema: { type: 'string' },
};
const eventStream = (description: string) => ({ description, content: { 'text/event-stream': { schema: { type: 'string' } } } });
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } };
const errors = {
  '400': { description: 'Invalid JSON, body, id or query', ...json('error-reply') },
  '401': { description: 'No or invalid token', ...json('error-reply') },
  '403': { description: 'Token lacks the scope or session, or a browser origin the server does not accept', ...json('error-reply') },
  '413': { description: 'Body larger than HOROLOGIUM_BODY_LIMIT (the message states the limit)', ...json('error-reply') },
  '415': { description: 'Body is not application/json', ...json('error-reply') },
  '429': { description: 'RATE_LIMITED: more requests per second with this token than HOROLOGIUM_RATE_LIMIT', headers: retryAfter, ...json('error-reply') },
  '503': { description: 'STORE_UNAVAILABLE (the store is unreachable) or SHUTTING_DOWN (the server is closing)', headers: retryAfter, ...json('error-reply') },
};
const post = (operationId: string, summary: string, body: Name, replies: Record<string, unknown>) => ({
  post: {
    operationId,
    summary,
    parameters: [sessionParam],
    requestBody: { required: true, ...json(body) },
    responses: { ...replies, ...errors },
  },
});
/** A GET of one session's SSE stream: where it starts (query, Last-Event-ID) and what it carries. */
const sessionEventStream = (operationId: string, summary: string, carries: string, query: 'sse-query' | 'ag-ui-query' = 'sse-query') => ({
  get: {
    operationId,
    summary,
    parameters: [sessionParam, ...queryParams(query), lastEventId],
    responses: { '200': eventStream(carries), ...errors },
  },
});
const queryParams = (name: 'queue-query' | 'events-query' | 'sessions-query' | 'sse-query' | 'ag-ui-query') => {
  const schema = jsonSchemas()[name] as { properties: Record<string, unknown> };
  return Object.entries(schema.properties).map(([key, s]) => ({ name: key, in: 'query', required: false, schema: s }));
};

export function openApiDocument(): Record<string, unknown> {
  const paths = openApiPaths();
  // The components the paths refer to; the stream's frames and messages are in schemas/asyncapi.json.
  const referenced = new Set([...JSON.stringify(paths).matchAll(/#\/components\/schemas\/([a-z-]+)/g)].map((m) => m[1] as string));
  const used = Object.fromEntries(Object.entries(jsonSchemas()).filter(([name]) => referenced.has(name)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Horologium',
      version: '1.2',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'Streams AI-agent tool activity: a lossless durable model queue and a live status stream. The protocol is docs/protocol.md in the Horologium repository.',
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'A server on its defaults (HOST, PORT)' }],
    components: {
      schemas: used,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function openApiPaths(): Record<string, unknown> {
  return {
    '/v1/sessions/{session}/tool-calls': post('publishToolCall', 'Publish tool_starting', 'tool-call-body', {
      '202': { description: 'Published', ...json('event-seq-reply') },
      '200': { description: 'Repeat of an earlier call', ...json('event-seq-reply') },
      '409': { description: 'CALL_ID_CONFLICT', ...json('error-reply') },
    }),
    '/v1/sessions/{session}/tool-results': post('publishToolResult', 'Queue a tool result and publish tool_completed', 'tool-result-body', {
      '202': { description: 'Committed', ...json('tool-result-reply') },
      '200': { description: 'Duplicate of an earlier result', ...json('tool-result-reply') },
      '409': { description: 'CALL_ID_CONFLICT', ...json('error-reply') },
    }),
    '/v1/sessions/{session}/events': {
      ...post('publishEvent', 'Publish a status event', 'event-body', {
        '202': { description: 'Published', ...json('event-seq-reply') },
        '200': { description: 'Repeat of an earlier event with this event_id', ...json('event-seq-reply') },
        '409': { description: 'EVENT_ID_CONFLICT', ...json('error-reply') },
      }),
      get: {
        operationId: 'replayEvents',
        summary: 'Replay retained status events',
        parameters: [sessionParam, ...queryParams('events-query')],
        responses: { '200': { description: 'Events', ...json('events-reply') }, ...errors },
      },
    },
    '/v1/sessions/{session}/queue': {
      get: {
        operationId: 'readQueue',
        summary: 'Read the model queue (long-poll with wait)',
        parameters: [sessionParam, ...queryParams('queue-query')],
        responses: { '200': { description: 'Entries', ...json('queue-reply') }, ...errors },
      },
    },
    '/v1/sessions/{session}/tool-results/{call_id}': {
      get: {
        operationId: 'getToolResult',
        summary: "One completed call's complete result, byte for byte (scope consume)",
        parameters: [sessionParam, { name: 'call_id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } }],
        responses: {
          '200': {
            description: "The result's JSON text as the queue entry holds it",
            headers: { 'X-Horologium-Queue-Seq': { description: 'The queue_seq of its entry.', schema: { type: 'integer', minimum: 1 } } },
            content: { 'application/json': { schema: {} } },
          },
          '404': { description: 'RESULT_NOT_FOUND: no result for this call_id (unknown, running, or removed by retention)', ...json('error-reply') },
          ...errors,
        },
      },
    },
    '/v1/sessions/{session}/queue/ack': post('ackQueue', 'Commit the queue cursor', 'ack-body', {
      '200': { description: 'Committed cursor', ...json('ack-reply') },
      '409': { description: 'ACK_BEYOND_HEAD', ...json('error-reply') },
    }),
    '/v1/sessions': {
      get: {
        operationId: 'listSessions',
        summary: 'List the sessions the token covers, most recently active first',
        parameters: queryParams('sessions-query'),
        responses: { '200': { description: 'A page of sessions', ...json('sessions-reply') }, ...errors },
      },
    },
    '/v1/sessions/{session}': {
      get: {
        operationId: 'getSession',
        summary: 'One session',
        parameters: [sessionParam],
        responses: { '200': { description: 'Its summary', ...json('session-summary') }, '404': { description: 'SESSION_NOT_FOUND', ...json('error-reply') }, ...errors },
      },
      delete: {
        operationId: 'deleteSession',
        summary: 'Delete a session: its events, queue and call records (scope admin)',
        parameters: [sessionParam],
        responses: { '200': { description: 'Deleted', ...json('session-deleted-reply') }, '404': { description: 'SESSION_NOT_FOUND', ...json('error-reply') }, ...errors },
      },
    },
    '/v1/sessions/{session}/sse': sessionEventStream(
      'streamSessionSse',
      'The status stream as Server-Sent Events (docs/protocol.md section 10)',
      'subscribed, then status events (id: <epoch>:<seq>)',
    ),
    '/v1/sessions/{session}/ag-ui': sessionEventStream(
      'streamSessionAgUi',
      'The session as AG-UI events over SSE (docs/protocol.md section 11); snapshot=1 catches up with one MESSAGES_SNAPSHOT',
      'RUN_STARTED (and MESSAGES_SNAPSHOT with snapshot=1), then AG-UI events',
      'ag-ui-query',
    ),
    '/v1/sessions/{session}/ui-message-stream': sessionEventStream(
      'streamSessionUiMessages',
      "The session as the AI SDK's UI message stream, one assistant message (docs/protocol.md section 13); replays from the start unless a resume says otherwise",
      'start, then tool-input-*, tool-output-* and data-<type> chunks; header x-vercel-ai-ui-message-stream: v1',
    ),
    '/v1/ag-ui': {
      post: {
        operationId: 'runAgUi',
        summary: "AG-UI's HttpAgent endpoint: a RunAgentInput whose threadId is the session (docs/protocol.md section 11)",
        parameters: [lastEventId],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['threadId', 'runId', 'messages'],
                properties: {
                  threadId: { type: 'string', pattern: sessionParam.schema.pattern, description: 'The session.' },
                  runId: { type: 'string' },
                  messages: { type: 'array' },
                  forwardedProps: { type: 'object', description: 'since and epoch say where to start; snapshot: true catches up with one MESSAGES_SNAPSHOT.' },
                },
                description: 'An AG-UI RunAgentInput.',
              },
            },
          },
        },
        responses: { '200': eventStream('RUN_STARTED, then AG-UI events'), ...errors },
      },
    },
    '/v1/stream': {
      get: {
        operationId: 'openStream',
        summary: 'WebSocket status stream (see docs/protocol.md section 5; its messages: schemas/asyncapi.json)',
        responses: {
          '101': { description: 'Switching protocols' },
          '400': { description: 'INVALID_QUERY: a malformed session, since or epoch in the URL', ...json('error-reply') },
          '401': errors['401'],
          '403': errors['403'],
          '426': { description: 'UPGRADE_REQUIRED: a plain GET, without Upgrade: websocket', ...json('error-reply') },
          '429': { description: 'TOO_MANY_CONNECTIONS from this address', headers: retryAfter, ...json('error-reply') },
          '503': errors['503'],
        },
      },
    },
    '/healthz': { get: { operationId: 'checkLiveness', summary: 'Liveness', security: [], responses: { '200': { description: 'Up' } } } },
    '/readyz': {
      get: {
        operationId: 'checkReadiness',
        summary: 'Readiness',
        security: [],
        responses: {
          '200': {
            description: "Ready; `warnings` lists what the store's own settings do to durability (a Redis that may evict keys or has no AOF)",
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['status', 'store', 'warnings'],
                  properties: {
                    status: { const: 'ready' },
                    store: { type: 'string' },
                    warnings: {
                      type: 'array',
                      items: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
                    },
                  },
                },
              },
            },
          },
          '503': { description: 'The store cannot take writes (unreachable, or a full disk)', headers: retryAfter } },
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics (scope admin; docs/operations.md lists them)',
        responses: { '200': { description: 'Metrics text', content: { 'text/plain': { schema: { type: 'string' } } } }, '401': errors['401'], '403': errors['403'] },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This document (any valid token)',
        responses: { '200': { description: 'The OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } }, '401': errors['401'] },
      },
    },
  };
}
