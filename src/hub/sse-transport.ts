/**
 * The Server-Sent Events transport (docs/protocol.md section 10): one HTTP response carrying one
 * subscription. A status frame goes out as `id: <epoch>:<seq>`, `event: status`, `data: <frame>`
 * (encoded once per event and epoch, shared by every SSE subscriber); the other messages as
 * `event: <method>` with the message's `result` as data. The heartbeat is a comment line. An
 * `unsubscribed` (the session was deleted) ends the response after it; a slow reader is cut.
 */
import type { ServerResponse } from 'node:http';
import type { CloseName } from '../errors.js';
import { HEARTBEAT } from '../wire/frames.js';
import type { Outgoing, Transport } from './transport.js';

const HEARTBEAT_BYTES = Buffer.from(`: ${HEARTBEAT}\n\n`);

/** The SSE record of a status frame: what `EventSource` needs to resume (`Last-Event-ID`). */
export function sseStatusRecord(frame: string, epoch: string, seq: number): Buffer {
  return Buffer.from(`id: ${epoch}:${seq}\nevent: status\ndata: ${frame}\n\n`);
}

export class SseTransport implements Transport {
  private ended = false;

  constructor(private readonly res: ServerResponse) {
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

  send(message: Outgoing, epoch = ''): void {
    if (!this.open) return;
    if (message.method === 'status') {
      this.res.write(message.encoded(`sse:${epoch}`, () => sseStatusRecord(message.frame, epoch, message.seq as number)));
      return;
    }
    const result = JSON.stringify((JSON.parse(message.frame) as { result?: unknown }).result ?? null);
    this.res.write(`event: ${message.method}\ndata: ${result}\n\n`);
    // The only subscription of this response ended: so does the response.
    if (message.method === 'unsubscribed') this.end();
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

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.end();
  }
}
