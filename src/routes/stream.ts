/**
 * GET /v1/stream: the WebSocket status stream (docs/protocol.md, "Stream"). This route is admission
 * and wiring: before the handshake (after the app's browser-origin check), the per-address connection limit,
 * the upgrade URL's subscription (parsed once; malformed is a refused upgrade) and, in the auth
 * guard, the token of the header or `?token=`. After it, the hub opens a stream over a WsTransport,
 * and the StreamProtocol handles its client messages.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import websocket from '@fastify/websocket';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { AppContext } from '../app-context.js';
import type { AuthFailureKind } from '../auth/authenticator.js';
import { HorologiumError } from '../common/errors.js';
import { isRequestError, parseQuery, StreamProtocol, type SubscribeRequest } from '../stream/stream-protocol.js';
import { WsTransport } from '../stream/ws-transport.js';

const MAX_CLIENT_FRAME = 64 * 1024;

export async function streamRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config, authenticator, hub, sessionWatch } = ctx;
  const perAddress = new Map<string, number>();
  /** The upgrade URL's subscription, parsed at admission and taken by the handler. */
  const querySubscription = new WeakMap<FastifyRequest, SubscribeRequest>();
  // Shared by every connection rather than made for each (issue 31: an idle connection's bytes).
  const limits = { maxBufferedBytes: config.maxBufferedBytes, maxSubscriptions: config.maxSubscriptions };
  const authFailed = (kind: AuthFailureKind) => ctx.metrics.authFailed('ws', kind);
  await app.register(websocket, {
    // Invalid UTF-8 in a text frame is a bad client message like any other (an error frame, the
    // socket stays open), not a protocol failure: it is decoded with U+FFFD and fails as JSON.
    options: { maxPayload: MAX_CLIENT_FRAME, perMessageDeflate: false, skipUTF8Validation: true },
    // Shutdown closes every stream, this plugin's WebSockets included, in one place: the app's
    // preClose hook (hub.closeAll sends each client 1001 and logs its close). The plugin's own
    // default would close them without a code.
    preClose: (done) => done(),
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
      releaseUpgradeRequest(ws, request.log);
      const address = request.ip;
      perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
      const connection = hub.open(new WsTransport(ws, config.heartbeatMs), {
        kind: 'ws',
        log: request.log,
        address,
        principal: request.principal?.id,
        limits,
      });
      const protocol = new StreamProtocol(connection, authenticator, sessionWatch, request.principal, querySubscription.get(request), authFailed);
      ws.on('close', () => {
        protocol.dispose();
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

/**
 * Lets an idle connection keep only its own state, not the upgrade's HTTP exchange (issue 31: about
 * 2 KiB of heap a connection, BENCHMARKS.md "bench/connection-heap"). @fastify/websocket's error
 * listener closes over Fastify's request and reply (and through them the IncomingMessage, its
 * headers and the ServerResponse), and that response stays attached to the socket as its HTTP
 * message until the socket ends. The listener is replaced by one that does what the plugin's
 * default does (log the error, cut the socket) with only the logger, and the response, unused
 * after the hijacked upgrade, is detached.
 */
function releaseUpgradeRequest(ws: WebSocket, log: FastifyBaseLogger): void {
  ws.removeAllListeners('error');
  ws.on('error', (error) => {
    log.error(error);
    ws.terminate();
  });
  const socket = (ws as unknown as { _socket?: Socket & { _httpMessage?: ServerResponse | null } })._socket;
  if (socket?._httpMessage) socket._httpMessage.detachSocket(socket);
}
