/**
 * GET /v1/stream: the WebSocket status stream (CONTRACT.md section 5). Parses client messages and
 * hands them to the connection; the hub does the fan-out. Auth is not enforced yet (the server only
 * runs open, on loopback, until it is).
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { AppContext } from '../app-context.js';
import { CLOSE, Connection } from '../hub/connection.js';
import { errorFrame, HEARTBEAT } from '../hub/frames.js';
import { Hub } from '../hub/hub.js';
import { SESSION_ID, subscribeMessage, unsubscribeMessage } from '../wire.js';

const MAX_CLIENT_FRAME = 64 * 1024;

export async function streamRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const hub = new Hub(ctx.store, ctx.config.heartbeatMs);
  await app.register(websocket, {
    options: { maxPayload: MAX_CLIENT_FRAME, perMessageDeflate: false },
    preClose: (done) => {
      hub.closeAll();
      done();
    },
  });

  app.get('/v1/stream', { websocket: true }, (ws: WebSocket, request) => {
    const connection = new Connection(ws, ctx.store, hub, {
      maxBufferedBytes: ctx.config.maxBufferedBytes,
      maxSubscriptions: ctx.config.maxSubscriptions,
    });
    hub.connections.add(connection);
    ws.on('pong', () => (connection.lastPong = Date.now()));
    ws.on('close', () => {
      connection.dispose();
      hub.connections.delete(connection);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) {
        connection.close(CLOSE.UNSUPPORTED, 'binary frames are not accepted');
        return;
      }
      const text = data.toString();
      if (text === HEARTBEAT) return;
      connection.enqueue(() => handle(connection, text));
    });
    const query = request.query as { session?: string; since?: string; epoch?: string };
    if (query.session !== undefined) {
      const since = query.since === undefined ? undefined : Number(query.since);
      connection.enqueue(() => handle(connection, JSON.stringify({ method: 'subscribe', params: { session: query.session, ...(since === undefined || Number.isNaN(since) ? {} : { since }), ...(query.epoch ? { epoch: query.epoch } : {}) } })));
    }
  });
}

async function handle(connection: Connection, text: string): Promise<void> {
  let message: { method?: unknown };
  try {
    message = JSON.parse(text) as { method?: unknown };
  } catch {
    connection.sendText(errorFrame('INVALID_JSON', 'client messages are JSON text frames'));
    return;
  }
  const method = typeof message === 'object' && message !== null ? message.method : undefined;
  if (method === 'subscribe') {
    const parsed = subscribeMessage.safeParse(message);
    if (!parsed.success) {
      connection.sendText(errorFrame('INVALID_MESSAGE', `subscribe needs params.session matching ${SESSION_ID.source} and an optional whole since`));
      return;
    }
    await connection.subscribe(parsed.data.params.session, parsed.data.params.since, parsed.data.params.epoch);
  } else if (method === 'unsubscribe') {
    const parsed = unsubscribeMessage.safeParse(message);
    if (!parsed.success) {
      connection.sendText(errorFrame('INVALID_MESSAGE', 'unsubscribe needs params.session'));
      return;
    }
    connection.unsubscribe(parsed.data.params.session);
  } else if (method === 'auth' || method === 'refresh') {
    connection.sendText(errorFrame('AUTH_NOT_CONFIGURED', 'this server runs without auth; no token is needed'));
  } else {
    connection.sendText(errorFrame('UNKNOWN_METHOD', 'methods: subscribe, unsubscribe, auth, refresh'));
  }
}
