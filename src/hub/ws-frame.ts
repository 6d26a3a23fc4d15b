/**
 * A live event's complete WebSocket frame (RFC 6455: final, text, unmasked as a server's frames
 * are), built once per event with ws's own framing and written as is to every subscriber's socket.
 * Sending the payload with `ws.send` instead would frame it again for each subscriber.
 *
 * Writing to the socket directly keeps the frame order of `ws.send`, because ws queues frames only
 * while compressing (permessage-deflate is off on the stream) or reading a Blob (never sent here).
 */
import type { Duplex } from 'node:stream';
import * as ws from 'ws';
import type { WebSocket } from 'ws';

interface FrameOptions {
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
}
// ws exports its Sender (not in @types/ws); its static frame() is the framing ws.send uses.
const Sender = (ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } }).Sender;
const TEXT: FrameOptions = { fin: true, rsv1: false, opcode: 0x01, mask: false, readOnly: false };

export function textFrame(payload: Buffer): Buffer {
  return Buffer.concat(Sender.frame(payload, TEXT));
}

/** The socket under an open WebSocket, to write a prepared frame to. */
export function rawSocket(socket: WebSocket): Duplex | undefined {
  return (socket as unknown as { _socket?: Duplex })._socket;
}
