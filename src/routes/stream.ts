/**
 * GET /v1/stream: the WebSocket status stream (CONTRACT.md section 5). Before the handshake: the
 * browser origin check, the per-address connection limit and (in the auth guard) the token of the
 * header or `?token=`. After it: client messages are parsed here and handed to the connection, with
 * the `auth` / `refresh` rules of StreamAuth; the hub does the fan-out.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { AppContext } from '../app-context.js';
import { AuthError } from '../auth/authenticator.js';
import { authorize } from '../auth/guard.js';
import { hasScope, coversSession } from '../auth/principal.js';
import { StreamAuth } from '../auth/stream-auth.js';
import { HorologiumError } from '../errors.js';
import { CLOSE, Connection } from '../hub/connection.js';
import { errorFrame, HEARTBEAT, refreshedFrame } from '../hub/frames.js';
import { Hub } from '../hub/hub.js';
import { authMessage, SESSION_ID, subscribeMessage, unsubscribeMessage } from '../wire.js';

const MAX_CLIENT_FRAME = 64 * 1024;

interface StreamClient {
  connection: Connection;
  auth: StreamAuth;
  /** The `?session=` subscription of a socket that still has to send `auth`. */
  deferred?: string;
}

export async function streamRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config, authenticator } = ctx;
  const hub = new Hub(ctx.store, config.heartbeatMs);
  const perAddress = new Map<string, number>();
  const allowedOrigins = config.allowedOrigins?.map((o) => o.replace(/\/+$/, '').toLowerCase());
  await app.register(websocket, {
    // Invalid UTF-8 in a text frame is a bad client message like any other (an error frame, the
    // socket stays open), not a protocol failure: it is decoded with U+FFFD and fails as JSON.
    options: { maxPayload: MAX_CLIENT_FRAME, perMessageDeflate: false, skipUTF8Validation: true },
    preClose: (done) => {
      hub.closeAll();
      done();
    },
  });

  /** Refusals before the handshake, as HTTP replies with the section 4 envelope. */
  const admit = async (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && allowedOrigins && !allowedOrigins.includes(origin.toLowerCase())) {
      throw new HorologiumError('FORBIDDEN', 'This origin may not open the stream (HOROLOGIUM_ALLOWED_ORIGINS).');
    }
    if ((perAddress.get(request.ip) ?? 0) >= config.maxConnectionsPerAddress) {
      throw new HorologiumError('TOO_MANY_CONNECTIONS', `At most ${config.maxConnectionsPerAddress} stream connections per address.`, [], { 'retry-after': '5' });
    }
  };

  app.get('/v1/stream', { websocket: true, config: { scope: 'subscribe', stream: true }, onRequest: admit }, (ws: WebSocket, request) => {
    const address = request.ip;
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    const connection = new Connection(ws, ctx.store, hub, {
      maxBufferedBytes: config.maxBufferedBytes,
      maxSubscriptions: config.maxSubscriptions,
    });
    const client: StreamClient = { connection, auth: new StreamAuth((reason) => connection.close(CLOSE.UNAUTHORIZED, reason)) };
    client.auth.start(request.principal);
    hub.connections.add(connection);
    ws.on('pong', () => (connection.lastPong = Date.now()));
    ws.on('close', () => {
      connection.dispose();
      client.auth.dispose();
      hub.connections.delete(connection);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) {
        connection.close(CLOSE.UNSUPPORTED, 'binary frames are not accepted');
        return;
      }
      const text = data.toString();
      if (text === HEARTBEAT) return;
      connection.enqueue(() => handle(client, text));
    });
    const query = request.query as { session?: string; since?: string; epoch?: string };
    if (query.session !== undefined) {
      const since = query.since === undefined ? undefined : Number(query.since);
      const subscribe = JSON.stringify({ method: 'subscribe', params: { session: query.session, ...(since === undefined || Number.isNaN(since) ? {} : { since }), ...(query.epoch ? { epoch: query.epoch } : {}) } });
      if (client.auth.principal) connection.enqueue(() => handle(client, subscribe));
      else client.deferred = subscribe;
    }
  });

  async function handle(client: StreamClient, text: string): Promise<void> {
    const { connection, auth } = client;
    let message: { method?: unknown };
    try {
      message = JSON.parse(text) as { method?: unknown };
    } catch {
      if (!auth.principal) return connection.close(CLOSE.UNAUTHORIZED, 'the first message must be auth');
      connection.sendText(errorFrame('INVALID_JSON', 'client messages are JSON text frames'));
      return;
    }
    const method = typeof message === 'object' && message !== null ? message.method : undefined;
    if (!authenticator.enabled && (method === 'auth' || method === 'refresh')) {
      connection.sendText(errorFrame('AUTH_NOT_CONFIGURED', 'this server runs without auth; no token is needed'));
      return;
    }
    if (!auth.principal) {
      if (method !== 'auth') return connection.close(CLOSE.UNAUTHORIZED, 'the first message must be auth');
      const principal = await verified(message);
      if (principal instanceof Error) return connection.close(CLOSE.UNAUTHORIZED, principal.message);
      if (!hasScope(principal, 'subscribe')) return connection.close(CLOSE.FORBIDDEN, 'the token lacks the subscribe scope');
      auth.set(principal);
      if (client.deferred) await handle(client, client.deferred);
      client.deferred = undefined;
      return;
    }
    if (method === 'subscribe') {
      const parsed = subscribeMessage.safeParse(message);
      if (!parsed.success) {
        connection.sendText(errorFrame('INVALID_MESSAGE', `subscribe needs params.session matching ${SESSION_ID.source} and an optional whole since`));
        return;
      }
      const { session, since, epoch } = parsed.data.params;
      try {
        authorize(auth.principal, 'subscribe', session);
      } catch (err) {
        connection.sendText(errorFrame('FORBIDDEN', (err as HorologiumError).message));
        return;
      }
      await connection.subscribe(session, since, epoch);
    } else if (method === 'unsubscribe') {
      const parsed = unsubscribeMessage.safeParse(message);
      if (!parsed.success) {
        connection.sendText(errorFrame('INVALID_MESSAGE', 'unsubscribe needs params.session'));
        return;
      }
      connection.unsubscribe(parsed.data.params.session);
    } else if (method === 'refresh') {
      const principal = await verified(message);
      if (principal instanceof Error) {
        connection.sendText(errorFrame('UNAUTHORIZED', `refresh refused: ${principal.message}; the current token stays until it expires`));
        return;
      }
      if (!hasScope(principal, 'subscribe')) {
        connection.sendText(errorFrame('FORBIDDEN', 'refresh refused: the new token lacks the subscribe scope'));
        return;
      }
      auth.set(principal);
      // A narrower token ends the subscriptions it no longer covers.
      for (const session of [...connection.subscriptions.keys()]) {
        if (coversSession(principal, session)) continue;
        connection.sendText(errorFrame('FORBIDDEN', `the new token does not cover session ${session}`));
        connection.unsubscribe(session);
      }
      connection.sendText(refreshedFrame(principal.expiresAt === undefined ? null : Math.floor(principal.expiresAt / 1000)));
    } else if (method === 'auth') {
      connection.sendText(errorFrame('INVALID_MESSAGE', 'this socket is already authenticated; use refresh for a new token'));
    } else {
      connection.sendText(errorFrame('UNKNOWN_METHOD', 'methods: subscribe, unsubscribe, auth, refresh'));
    }
  }

  /** The principal of an auth or refresh message, or the error that says why there is none. */
  async function verified(message: unknown) {
    const parsed = authMessage.safeParse(message);
    if (!parsed.success) return new AuthError('auth needs params.token');
    try {
      return await authenticator.verify(parsed.data.params.token);
    } catch (err) {
      if (err instanceof AuthError) return err;
      throw err;
    }
  }
}
