/**
 * The peer most users would otherwise pick: Socket.IO 4, one room per session, each posted event
 * emitted to the room as the same status object (Socket.IO encodes a broadcast once per room).
 */
import { Server } from 'socket.io';
import { peerHttpServer } from './peer-http.js';

let io: Server;
const server = peerHttpServer((event) => io.to(event.session).emit('status', { method: 'status', result: event.result }));
io = new Server(server, { transports: ['websocket'], perMessageDeflate: false, serveClient: false });
io.on('connection', (socket) => {
  const session = String(socket.handshake.query.session ?? '');
  void socket.join(session);
  socket.emit('subscribed', { session });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
