/**
 * JSON Schemas of the wire (from the zod sources in wire.ts) and the OpenAPI 3.1 document built on
 * them. schemas/*.json are these schemas, written by `npm run schemas`.
 */
import { z } from 'zod';
import { PUBLISHED } from './wire/schemas.js';

type Name = keyof typeof PUBLISHED;

/** Request bodies and queries are described as clients send them; the rest as the server sends. */
const INPUTS: ReadonlySet<Name> = new Set([
  'tool-call-body',
  'tool-result-body',
  'event-body',
  'ack-body',
  'queue-query',
  'events-query',
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
const errors = {
  '400': { description: 'Invalid JSON, body, id or query', ...json('error-reply') },
  '401': { description: 'No or invalid token', ...json('error-reply') },
  '403': { description: 'Token lacks the scope or session', ...json('error-reply') },
  '413': { description: 'Body larger than HOROLOGIUM_BODY_LIMIT', ...json('error-reply') },
  '415': { description: 'Body is not application/json', ...json('error-reply') },
  '503': { description: 'Store unreachable; see Retry-After', ...json('error-reply') },
};
const post = (summary: string, body: Name, replies: Record<string, unknown>) => ({
  post: {
    summary,
    parameters: [sessionParam],
    requestBody: { required: true, ...json(body) },
    responses: { ...replies, ...errors },
  },
});
const queryParams = (name: 'queue-query' | 'events-query' | 'sessions-query' | 'sse-query') => {
  const schema = jsonSchemas()[name] as { properties: Record<string, unknown> };
  return Object.entries(schema.properties).map(([key, s]) => ({ name: key, in: 'query', required: false, schema: s }));
};

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Horologium',
      version: '1',
      description: 'Streams AI-agent tool activity: a lossless durable model queue and a live status stream. The protocol is docs/protocol.md in the Horologium repository.',
    },
    components: {
      schemas: jsonSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/sessions/{session}/tool-calls': post('Publish tool_starting', 'tool-call-body', {
        '202': { description: 'Published', ...json('event-seq-reply') },
        '200': { description: 'Repeat of an earlier call', ...json('event-seq-reply') },
        '409': { description: 'CALL_ID_CONFLICT', ...json('error-reply') },
      }),
      '/v1/sessions/{session}/tool-results': post('Queue a tool result and publish tool_completed', 'tool-result-body', {
        '202': { description: 'Committed', ...json('tool-result-reply') },
        '200': { description: 'Duplicate of an earlier result', ...json('tool-result-reply') },
        '409': { description: 'CALL_ID_CONFLICT', ...json('error-reply') },
      }),
      '/v1/sessions/{session}/events': {
        ...post('Publish a status event', 'event-body', { '202': { description: 'Published', ...json('event-seq-reply') } }),
        get: {
          summary: 'Replay retained status events',
          parameters: [sessionParam, ...queryParams('events-query')],
          responses: { '200': { description: 'Events', ...json('events-reply') }, ...errors },
        },
      },
      '/v1/sessions/{session}/queue': {
        get: {
          summary: 'Read the model queue (long-poll with wait)',
          parameters: [sessionParam, ...queryParams('queue-query')],
          responses: { '200': { description: 'Entries', ...json('queue-reply') }, ...errors },
        },
      },
      '/v1/sessions/{session}/queue/ack': post('Commit the queue cursor', 'ack-body', {
        '200': { description: 'Committed cursor', ...json('ack-reply') },
        '409': { description: 'ACK_BEYOND_HEAD', ...json('error-reply') },
      }),
      '/v1/sessions': {
        get: {
          summary: 'List the sessions the token covers, most recently active first',
          parameters: queryParams('sessions-query'),
          responses: { '200': { description: 'A page of sessions', ...json('sessions-reply') }, ...errors },
        },
      },
      '/v1/sessions/{session}': {
        get: {
          summary: 'One session',
          parameters: [sessionParam],
          responses: { '200': { description: 'Its summary', ...json('session-summary') }, '404': { description: 'SESSION_NOT_FOUND', ...json('error-reply') }, ...errors },
        },
        delete: {
          summary: 'Delete a session: its events, queue and call records (scope admin)',
          parameters: [sessionParam],
          responses: { '200': { description: 'Deleted', ...json('session-deleted-reply') }, '404': { description: 'SESSION_NOT_FOUND', ...json('error-reply') }, ...errors },
        },
      },
      '/v1/sessions/{session}/sse': {
        get: {
          summary: 'The status stream as Server-Sent Events (docs/protocol.md section 10)',
          parameters: [sessionParam, ...queryParams('sse-query'), lastEventId],
          responses: { '200': eventStream('subscribed, then status events (id: <epoch>:<seq>)'), ...errors },
        },
      },
      '/v1/sessions/{session}/ag-ui': {
        get: {
          summary: 'The session as AG-UI events over SSE (docs/protocol.md section 11)',
          parameters: [sessionParam, ...queryParams('sse-query'), lastEventId],
          responses: { '200': eventStream('RUN_STARTED, then AG-UI events'), ...errors },
        },
      },
      '/v1/ag-ui': {
        post: {
          summary: "AG-UI's HttpAgent endpoint: a RunAgentInput whose threadId is the session (docs/protocol.md section 11)",
          parameters: [lastEventId],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['threadId', 'runId', 'messages'], description: 'An AG-UI RunAgentInput; forwardedProps.since and forwardedProps.epoch say where to start.' } } } },
          responses: { '200': eventStream('RUN_STARTED, then AG-UI events'), ...errors },
        },
      },
      '/v1/stream': {
        get: {
          summary: 'WebSocket status stream (see docs/protocol.md section 5)',
          responses: { '101': { description: 'Switching protocols' }, '401': errors['401'], '403': errors['403'] },
        },
      },
      '/healthz': { get: { summary: 'Liveness', security: [], responses: { '200': { description: 'Up' } } } },
      '/readyz': {
        get: {
          summary: 'Readiness',
          security: [],
          responses: { '200': { description: 'Ready' }, '503': { description: 'Store unreachable' } },
        },
      },
      '/metrics': { get: { summary: 'Prometheus metrics', responses: { '200': { description: 'Metrics text' } } } },
    },
  };
}
