/**
 * The Server-Sent Events transport (docs/protocol.md sections 10 and 11): one HTTP response carrying
 * one subscription, in the records of its format (wire/sse.ts: the status stream, or AG-UI). A
 * status frame's records are encoded once per event, format and epoch, and shared by every reader.
 * The heartbeat is a comment line. An `unsubscribed` (the session was deleted) ends the response
 * after it; a slow reader is cut (it resumes with Last-Event-ID).
 */
import type { ServerResponse } from 'node:http';
import { CLOSE_CODES, type CloseName } from '../common/errors.js';
import { SSE_HEARTBEAT, type SseFormat } from '../wire/sse.js';
import type { Outgoing, Transport } from './transport.js';

const HEARTBEAT_BYTES = Buffer.from(SSE_HEARTBEAT);

export class SseTransport implements Transport {
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly format: SseFormat,
  ) {
    const opening = format.opening();
    if (opening !== '') res.write(opening);
    const socket = res.socket;
    res.on('close', () => {
      this.ended = true;
      // The peer went away (or the response ended): release the socket now, so that neither a
      // half-closed client socket nor shutdown waits on it.
      socket?.destroy();
    });
  }

  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  get open(): boolean {
    return !this.ended && !this.res.destroyed && this.res.writable;
  }

  send(message: Outgoing, epoch = ''): number {
    if (!this.open) return 0;
    const { format } = this;
    if (message.method === 'status') {
      const bytes = message.encoded(`${format.name}:${epoch}`, () => Buffer.from(format.status(message.frame, epoch, message.seq as number)));
      this.res.write(bytes);
      return bytes.length;
    }
    const records = format.message(message.method, message.frame);
    if (records !== '') this.res.write(records);
    // The only subscription of this response ended: so does the response.
    if (message.method === 'unsubscribed') this.end();
    return Buffer.byteLength(records);
  }

  drained(): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  heartbeat(): void {
    if (this.open) this.res.write(HEARTBEAT_BYTES);
  }

  /** A slow reader is cut at once (it resumes with Last-Event-ID); otherwise the response ends. */
  close(name: CloseName): void {
    if (name === 'SLOW_CONSUMER') this.terminate();
    else this.end();
  }

  terminate(): void {
    this.ended = true;
    this.res.destroy();
  }

  /** A response ended by the server (its session was deleted), or one the client left. */
  onClosed(listener: (peer: { code: number; reason: string }) => void): void {
    this.res.once('close', () => listener({ code: CLOSE_CODES.NORMAL.code, reason: this.res.writableEnded ? 'ended by the server' : 'the client left' }));
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.end();
  }
}
