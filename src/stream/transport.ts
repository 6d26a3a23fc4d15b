/**
 * The boundary between a stream connection's protocol (connection.ts) and what carries its bytes:
 * a WebSocket (ws-transport.ts) or, for the Server-Sent Events streams, an HTTP response. The
 * connection never touches a socket; it calls these methods, and every message it sends, replayed
 * or live, goes through `send` in the order it was called.
 */
import type { CloseName } from '../common/errors.js';

/**
 * One message to send, as its frame text, with the encodings built for it so far. A live event is
 * one Outgoing shared by every subscriber of its session, so that each transport kind encodes it
 * once per event and not once per subscriber.
 */
export class Outgoing {
  private readonly encodings = new Map<string, Buffer>();
  private bytes = -1;

  constructor(
    /** The stream message's method: `status`, `subscribed`, `unsubscribed`, `error`, … */
    readonly method: string,
    /** The frame: the message's JSON text. */
    readonly frame: string,
    /** For a status frame: its session and seq. */
    readonly session?: string,
    readonly seq?: number,
    /** For a live status frame, the epoch it was committed under, when the live feed says (redis). */
    readonly epoch?: string,
  ) {}

  /** The frame's length in UTF-8 bytes: what it weighs in a buffer. */
  get byteLength(): number {
    if (this.bytes < 0) this.bytes = Buffer.byteLength(this.frame);
    return this.bytes;
  }

  /** The encoding named `key`, built by `build` the first time it is asked for. */
  encoded(key: string, build: () => Buffer): Buffer {
    let bytes = this.encodings.get(key);
    if (bytes === undefined) this.encodings.set(key, (bytes = build()));
    return bytes;
  }
}

export interface Transport {
  /** Bytes handed to the transport and not yet taken by the peer. */
  readonly bufferedBytes: number;
  /** False once the transport is closing or closed: sending then does nothing. */
  readonly open: boolean;
  /**
   * Sends one message; `epoch` is the epoch of the subscription a status frame belongs to. Returns
   * the bytes written to the peer (0 when closed), which the stream metrics count.
   */
  send(message: Outgoing, epoch?: string): number;
  /** Resolves once the buffered bytes have drained below the transport's low-water mark, or it closed. */
  drained(): Promise<void>;
  /** The heartbeat: a 💓 (and a protocol ping where there is one). */
  heartbeat(): void;
  /** Closes after what is already queued, with the catalog's close code (an SSE response just ends). */
  close(name: CloseName, reason: string): void;
  /** Cuts the peer at once. */
  terminate(): void;
  /**
   * Calls `listener` once, when the transport has closed, with the close as the peer saw it (a
   * WebSocket's close code and reason; for an SSE response, which has none, 1000 and who ended it).
   */
  onClosed(listener: (peer: { code: number; reason: string }) => void): void;
}
