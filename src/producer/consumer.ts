/**
 * The model-side queue consumer (docs/protocol.md section 4, scope `consume`): an async iterator
 * over a session's queue entries, long-polling for new ones, starting from the committed cursor and
 * acknowledging either what the loop has consumed (the default: see the iterator for exactly which
 * entries count) or explicitly with `ack`. Reads are retried like
 * every request (HttpClient), so the iterator goes on across a server restart; what was
 * acknowledged is never handed out again, and what was not is handed out again only to a new
 * consumer (at least once). A read that finds nothing without having waited (`wait: 0`, or the
 * server answered early) is followed by a pause, from 100 ms doubling to 2 s and reset by the next
 * entry, so an idle consumer never floods the server; `stopWhenEmpty` ends the loop instead.
 */
import { HttpClient, type HttpOptions } from '../sdk-common/http-client.js';

export interface QueueEntry {
  queue_seq: number;
  call_id: string;
  name: string;
  /** Parsed with JSON.parse: integers past 2^53 lose digits here; `message.content` keeps them. */
  args: unknown;
  result: unknown;
  execution_time: number | null;
  is_error: boolean;
  received_at: string;
  /** The `role: "tool"` message; `content` is the result's JSON text byte for byte. */
  message: { role: 'tool'; tool_call_id: string; content: string };
}

export interface QueueBatch {
  session: string;
  committed: number;
  head: number;
  entries: QueueEntry[];
}

export interface ConsumerOptions extends HttpOptions {
  session: string;
  /** `batch` (default) acknowledges what the loop consumed (each batch, and on leaving the loop); `manual` leaves it to `ack`. */
  ack?: 'batch' | 'manual';
  /** Seconds a read waits for the first entry (default 30, at most 60). */
  wait?: number;
  /** Entries per read (default 100, at most 1000). */
  limit?: number;
  /** Start after this queue_seq instead of the committed cursor. */
  after?: number;
  /** End the loop at the first read that finds no entry (the queue is drained); default false. */
  stopWhenEmpty?: boolean;
}

/** The pause after an empty read that did not wait: the first, and the longest. */
const IDLE_PAUSE_MS = { first: 100, max: 2000 } as const;

export class QueueConsumer implements AsyncIterable<QueueEntry> {
  private readonly http: HttpClient;
  private readonly path: string;
  /** The last queue_seq handed out; undefined until the first read (the server's committed cursor). */
  private position: number | undefined;
  private readonly stopper = new AbortController();

  constructor(private readonly options: ConsumerOptions) {
    this.http = new HttpClient(options);
    this.path = `/v1/sessions/${encodeURIComponent(options.session)}/queue`;
    this.position = options.after;
  }

  /** One read: entries after the position (or the committed cursor), waiting up to `wait` seconds. */
  async read(wait = this.options.wait ?? 30): Promise<QueueBatch> {
    const query = new URLSearchParams({ limit: String(this.options.limit ?? 100), wait: String(wait) });
    if (this.position !== undefined) query.set('after', String(this.position));
    const reply = await this.http.request({ method: 'GET', path: `${this.path}?${query}`, extraTimeoutMs: wait * 1000, signal: this.stopper.signal });
    const batch = JSON.parse(reply.text) as QueueBatch;
    if (this.position !== undefined && batch.head < this.position) {
      // The queue is behind where this consumer was: the session was deleted and began again.
      this.position = batch.committed;
      return this.read(0);
    }
    const last = batch.entries.at(-1);
    this.position = last ? last.queue_seq : Math.max(this.position ?? 0, batch.committed);
    return batch;
  }

  /** Commits the cursor through `queueSeq` (monotonic on the server); returns the committed cursor. */
  async ack(queueSeq: number): Promise<number> {
    const reply = await this.http.request({ method: 'POST', path: `${this.path}/ack`, body: JSON.stringify({ through: queueSeq }) });
    return (JSON.parse(reply.text) as { committed: number }).committed;
  }

  /** Ends the iteration: a read in progress is abandoned, and the loop ends. */
  close(): void {
    this.stopper.abort();
  }

  /**
   * The entries, long-polling for more. Which entries count as consumed (acknowledged unless `ack`
   * is `manual`): an entry is consumed once the loop asks for the entry after it. A whole batch is
   * acknowledged when the loop asks for more after its last entry. When the loop ends early (break,
   * return, or an exception in its body: the iterator's return()), the entries before the last one
   * it was given are acknowledged; the last one is not, since the iterator cannot tell a break after
   * handling it from an exception while handling it. Acknowledge it with `ack(entry.queue_seq)`
   * before leaving when it is done; otherwise the next consumer gets it again (at least once).
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<QueueEntry> {
    const auto = (this.options.ack ?? 'batch') === 'batch';
    /** The last queue_seq the loop is done with, and the last one acknowledged here. */
    let done = 0;
    let acked = 0;
    let pause = 0;
    try {
      while (!this.stopper.signal.aborted) {
        let batch: QueueBatch;
        const wait = this.options.wait ?? 30;
        const asked = Date.now();
        try {
          batch = await this.read(wait);
        } catch (err) {
          if (this.stopper.signal.aborted) return;
          throw err;
        }
        for (const entry of batch.entries) {
          yield entry;
          done = entry.queue_seq;
        }
        if (auto && done > acked) {
          await this.ack(done);
          acked = done;
        }
        if (batch.entries.length > 0) {
          pause = 0;
        } else if (this.options.stopWhenEmpty) {
          return;
        } else if (wait === 0 || Date.now() - asked < wait * 1000) {
          // Nothing, and the server did not hold the read for `wait`: asking again at once would spin.
          pause = Math.min(pause === 0 ? IDLE_PAUSE_MS.first : pause * 2, IDLE_PAUSE_MS.max);
          await abortableSleep(pause, this.stopper.signal);
        }
      }
    } finally {
      // Best effort: if this acknowledgement fails, those entries are handed out again.
      if (auto && done > acked) await this.ack(done).catch(() => undefined);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
