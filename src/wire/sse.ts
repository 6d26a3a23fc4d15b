/**
 * The records of the two Server-Sent Events streams (docs/protocol.md sections 10 and 11). A format
 * turns the stream's messages into SSE records; stream/sse-transport.ts writes them.
 */

export interface SseFormat {
  /** Names the format in the cache of a live event's encodings, shared by every reader. */
  readonly name: string;
  /** Response headers of its own, beside the event stream's. */
  readonly headers?: Readonly<Record<string, string>>;
  /** What the response opens with ('' for nothing). */
  opening(): string;
  /** The records of one status frame, the last one preceded by `id: <epoch>:<seq>`. */
  status(frame: string, epoch: string, seq: number): string;
  /** The records of another stream message (`subscribed`, `unsubscribed`, `error`); '' for none. */
  message(method: string, frame: string): string;
}

/** The heartbeat comment. */
export const SSE_HEARTBEAT = ': 💓\n\n';

/** Section 10: `event: status` with the status frame as data; other messages with their result. */
export const STATUS_STREAM: SseFormat = {
  name: 'sse',
  opening: () => '',
  status: (frame, epoch, seq) => `id: ${epoch}:${seq}\nevent: status\ndata: ${frame}\n\n`,
  message: (method, frame) => `event: ${method}\ndata: ${JSON.stringify((JSON.parse(frame) as { result?: unknown }).result ?? null)}\n\n`,
};
