/**
 * The fan-out baseline: a bare `ws` broadcast server. Subscribers connect to
 * /v1/stream?session=S; each posted event becomes one Buffer sent to every subscriber of S.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { peerHttpServer } from './peer-http.js';

const rooms = new Map<string, Set<WebSocket>>();
const server = peerHttpServer((event) => {
  const bytes = Buffer.from(event.frame);
  for (const ws of rooms.get(event.session) ?? []) ws.send(bytes, { binary: false });
});
const wss = new WebSocketServer({ server, path: '/v1/stream' });
wss.on('connection', (ws, req) => {
  const session = new URL(req.url ?? '/', 'http://x').searchParams.get('session') ?? '';
  let room = rooms.get(session);
  if (!room) rooms.set(session, (room = new Set()));
  room.add(ws);
  ws.on('close', () => room.delete(ws));
  ws.send(JSON.stringify({ method: 'subscribed', result: { session } }));
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
