/**
 * The WebSocket transport, and the only file that knows `ws` internals.
 *
 * Every message is written as a complete WebSocket frame (RFC 6455: final, text, unmasked as a
 * server's are) straight to the socket under the WebSocket. A live event's encoding is built once
 * with ws's own framing (`Sender.frame`, what `ws.send` uses) and the same bytes go to every
 * subscriber; `ws.send` would frame the payload again for each. Because replayed and live messages
 * alike are written here, in call order, to the same socket, their order cannot depend on how a
 * future ws release queues `send`. Only ws's own control frames (ping, close) bypass this path;
 * ws writes them to the same socket synchronously too, as it does not queue without compression
 * (permessage-deflate is off on the stream).
 */
import type { Duplex } from 'node:stream';
import * as ws from 'ws';
import type { WebSocket } from 'ws';
import { CLOSE_CODES, type CloseName } from '../common/errors.js';
import { HEARTBEAT } from '../wire/frames.js';
import { Outgoing, type Transport } from './transport.js';

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
const ENCODING = 'ws';
/** A peer that does not read the close frame within this is cut. */
const CLOSE_GRACE_MS = 30_000;
/** The heartbeat message, encoded once for every connection. */
const HEARTBEAT_MESSAGE = new Outgoing('heartbeat', HEARTBEAT);

/** The encoding of one text message: a complete RFC 6455 frame (final, text, unmasked) carrying `payload`. */
export function encodeTextMessage(payload: Buffer): Buffer {
  return Buffer.concat(Sender.frame(payload, TEXT));
}

export class WsTransport implements Transport {
  private readonly socket: Duplex | undefined;
  private closing = false;
  private lastPong = Date.now();

  /** `heartbeatMs`: a peer that answers no ping for two of these is cut. */
  constructor(
    private readonly ws: WebSocket,
    private readonly heartbeatMs: number,
  ) {
    this.socket = (ws as unknown as { _socket?: Duplex })._socket;
    ws.on('pong', () => (this.lastPong = Date.now()));
  }

  get bufferedBytes(): number {
    return this.ws.bufferedAmount;
  }

  get open(): boolean {
    return !this.closing && this.ws.readyState === this.ws.OPEN && this.socket !== undefined;
  }

  send(message: Outgoing): number {
    if (!this.open || !this.socket) return 0;
    const bytes = message.encoded(ENCODING, () => encodeTextMessage(Buffer.from(message.frame)));
    this.socket.write(bytes);
    return bytes.length;
  }

  drained(): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.open) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.once('drain', done);
      socket.once('close', done);
    });
  }

  heartbeat(): void {
    if (Date.now() - this.lastPong > 2 * this.heartbeatMs) {
      this.terminate();
      return;
    }
    this.send(HEARTBEAT_MESSAGE);
    if (this.open) this.ws.ping();
  }

  close(name: CloseName, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    // A close reason is at most 123 bytes (RFC 6455 5.5); ours are short, this keeps them so.
    this.ws.close(CLOSE_CODES[name].code, Buffer.from(reason).subarray(0, 123).toString().replace(/\uFFFD$/, ''));
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  terminate(): void {
    this.closing = true;
    this.ws.terminate();
  }

  /** ws reports what the peer echoed, or 1006 when a stalled peer was cut. */
  onClosed(listener: (peer: { code: number; reason: string }) => void): void {
    this.ws.once('close', (code: number, reason: Buffer) => listener({ code, reason: reason.toString() }));
  }
}
