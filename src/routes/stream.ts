/**
 * GET /v1/stream: the WebSocket status stream (docs/protocol.md, "Stream"). This route is admission
 * and wiring: before the handshake (after the app's browser-origin check), the per-address connection limit,
 * the upgrade URL's subscription (parsed once; malformed is a refused upgrade) and, in the auth
 * guard, the token of the header or `?token=`. After it, a WsTransport carries a Connection whose
 * client messages the StreamProtocol handles; the hub (built with the app) does the fan-out.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { AppContext } from '../app-context.js';
import { HorologiumError } from '../errors.js';
import { Connection } from '../hub/connection.js';
import { isRequestError, parseQuery, StreamProtocol, type SubscribeRequest } from '../hub/stream-protocol.js';
import { StreamTelemetry } from '../hub/stream-telemetry.js';
import { WsTransport } from '../hub/ws-transport.js';

const MAX_CLIENT_FRAME = 64 * 1024;

export async function streamRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config, authenticator, hub, sessionWatch } = ctx;
  const perAddress = new Map<string, number>();
  /** The upgrade URL's subscription, parsed at admission and taken by the handler. */
  const querySubscription = new WeakMap<FastifyRequest, SubscribeRequest>();
  await app.register(websocket, {
    // Invalid UTF-8 in a text frame is a bad client message like any other (an error frame, the
    // socket stays open), not a protocol failure: it is decoded with U+FFFD and fails as JSON.
    options: { maxPayload: MAX_CLIENT_FRAME, perMessageDeflate: false, skipUTF8Validation: true },
    // Every stream client is sent 1001 and its close is logged before the server closes.
    preClose: (done) => {
      void hub.closeAll().then(() => done());
    },
  });

  /** Refusals before the handshake, as HTTP replies with the error envelope. */
  const admit = async (request: FastifyRequest) => {
    if ((perAddress.get(request.ip) ?? 0) >= config.maxConnectionsPerAddress) {
      throw new HorologiumError('TOO_MANY_CONNECTIONS', `At most ${config.maxConnectionsPerAddress} stream connections per address.`, [], { 'retry-after': '5' });
    }
    const subscription = parseQuery(request.query as Record<string, unknown>);
    if (isRequestError(subscription)) throw new HorologiumError('INVALID_QUERY', `Invalid stream URL: ${subscription.message}.`);
    if (subscription) querySubscription.set(request, subscription);
  };

  app.route({
    method: 'GET',
    url: '/v1/stream',
    config: { scope: 'subscribe', stream: true, streamKind: 'ws' },
    onRequest: admit,
    // A plain GET (no Upgrade header) is told what the endpoint needs, not answered with a bare 404.
    handler: async (_request, reply) => {
      reply.header('upgrade', 'websocket');
      throw new HorologiumError('UPGRADE_REQUIRED', 'GET /v1/stream is a WebSocket endpoint: send Upgrade: websocket (or use /v1/sessions/{session}/sse).');
    },
    wsHandler: (ws: WebSocket, request) => {
      const address = request.ip;
      perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
      const telemetry = new StreamTelemetry('ws', ctx.metrics.streams.ws, request.log, address, request.principal?.id);
      const connection = new Connection(
        new WsTransport(ws, config.heartbeatMs),
        ctx.store,
        hub,
        { maxBufferedBytes: config.maxBufferedBytes, maxSubscriptions: config.maxSubscriptions },
        telemetry,
      );
      hub.attach(connection);
      telemetry.opened();
      const protocol = new StreamProtocol(connection, authenticator, sessionWatch, request.principal, querySubscription.get(request), (kind) =>
        ctx.metrics.authFailed('ws', kind),
      );
      ws.on('close', (code: number, reason: Buffer) => {
        // The server's own close, when it closed first (ws reports what the peer echoed, or 1006
        // when a stalled peer is cut); else the client's.
        const closed = connection.closedWith ?? { code, reason: reason.toString() };
        telemetry.closed(closed.code, closed.reason);
        connection.dispose();
        protocol.dispose();
        hub.detach(connection);
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left === 0) perAddress.delete(address);
        else perAddress.set(address, left);
      });
      ws.on('message', (data: RawData, isBinary: boolean) => {
        if (isBinary) connection.close('UNSUPPORTED_DATA', 'binary frames are not accepted');
        else protocol.received(data.toString());
      });
    },
  });
}
