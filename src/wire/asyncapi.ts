/**
 * The AsyncAPI 3.0 document of the WebSocket stream (docs/protocol.md section 5), built from the same
 * zod sources as the JSON Schemas and the OpenAPI document (wire/schemas.ts, through openapi.ts's
 * jsonSchemas), so that the three cannot drift apart. `npm run schemas` writes it to
 * schemas/asyncapi.json; test/wire/asyncapi.test.ts validates it against AsyncAPI's own 3.0.0 schema.
 */
import { jsonSchemas } from './openapi.js';
import { HEARTBEAT } from './frames.js';
import { SESSION_ID } from './schemas.js';

/** What the client sends, and what the server sends, by message name → published schema. */
const CLIENT_MESSAGES = {
  subscribe: 'subscribe-message',
  unsubscribe: 'unsubscribe-message',
  auth: 'auth-message',
  watchSessions: 'watch-sessions-message',
  unwatchSessions: 'unwatch-sessions-message',
} as const;
const SERVER_MESSAGES = {
  status: 'status-frame',
  subscribed: 'subscribed-frame',
  unsubscribed: 'unsubscribed-frame',
  error: 'error-frame',
  refreshed: 'refreshed-frame',
  session: 'session-frame',
} as const;

export function asyncApiDocument(): Record<string, unknown> {
  const schemas = jsonSchemas();
  const message = (name: string, schema: keyof typeof schemas) => {
    const { $schema: _ignored, ...payload } = schemas[schema] as Record<string, unknown>;
    return { name, contentType: 'application/json', payload };
  };
  const messages: Record<string, unknown> = {};
  for (const [name, schema] of [...Object.entries(CLIENT_MESSAGES), ...Object.entries(SERVER_MESSAGES)]) {
    messages[name] = message(name, schema as keyof typeof schemas);
  }
  messages.heartbeat = {
    name: 'heartbeat',
    contentType: 'text/plain',
    summary: 'Sent by the server every HOROLOGIUM_HEARTBEAT_MS; a client may send it too (it is ignored).',
    payload: { type: 'string', const: HEARTBEAT },
  };
  const channelMessages = Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }]));
  const refs = (names: readonly string[]) => names.map((name) => ({ $ref: `#/channels/stream/messages/${name}` }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Horologium status stream',
      version: '1.2',
      description: 'The WebSocket stream of Horologium: subscribe to sessions, get their status frames, replayed then live. The protocol is docs/protocol.md in the Horologium repository (section 5, close codes in "Close codes").',
      license: { name: 'MIT' },
    },
    defaultContentType: 'application/json',
    servers: {
      local: { host: '127.0.0.1:8080', protocol: 'ws', description: 'A server on its defaults (HOST, PORT)' },
    },
    channels: {
      stream: {
        address: '/v1/stream',
        title: 'The status stream',
        messages: channelMessages,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              description: 'An optional first subscription, and the token for clients that cannot set headers.',
              properties: {
                session: { type: 'string', pattern: SESSION_ID.source },
                since: { type: 'string', pattern: '^[0-9]{1,15}$' },
                epoch: { type: 'string', minLength: 1, maxLength: 256 },
                token: { type: 'string' },
              },
            },
            headers: { type: 'object', properties: { Authorization: { type: 'string', description: 'Bearer <token>' } } },
          },
        },
      },
    },
    operations: {
      sendRequests: {
        action: 'send',
        title: 'Client requests',
        channel: { $ref: '#/channels/stream' },
        messages: refs([...Object.keys(CLIENT_MESSAGES), 'heartbeat']),
      },
      receiveFrames: {
        action: 'receive',
        title: 'Server frames',
        channel: { $ref: '#/channels/stream' },
        messages: refs([...Object.keys(SERVER_MESSAGES), 'heartbeat']),
      },
    },
    components: { messages },
  };
}
