/**
 * What an operator sees of one stream connection (WebSocket, SSE or AG-UI): a `stream open` log
 * line, a `stream closed` line with what it carried (docs/operations.md), and its share of the
 * stream metrics. The hot path (a frame sent) only adds to plain numbers: here per connection, and
 * in the StreamTotals of its kind, which metrics.ts publishes at scrape time.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { StreamTotals } from '../telemetry/metrics.js';
import type { StreamKind } from '../wire/stream-kinds.js';

/** Close codes that are metric labels of their own; any other is `other` (a client picks 1000–4999 freely). */
const LABELLED_CLOSE_CODES: ReadonlySet<number> = new Set([1000, 1001, 1003, 1005, 1006, 1009, 4001, 4003, 4008]);

/** The close code as a bounded metric label. */
function closeCodeLabel(code: number): string {
  return LABELLED_CLOSE_CODES.has(code) ? String(code) : 'other';
}

/** A `stream closed` line lists at most this many sessions (and always how many subscribes there were). */
const LOGGED_SESSIONS = 20;

export class StreamTelemetry {
  private readonly startedAt = Date.now();
  private frames = 0;
  private bytes = 0;
  private replayed = 0;
  /** The first LOGGED_SESSIONS distinct sessions subscribed to (an array: most connections hold one or two). */
  private readonly sessions: string[] = [];
  private subscribes = 0;
  private done = false;

  constructor(
    readonly kind: StreamKind,
    private readonly totals: StreamTotals,
    /** The upgrade (or SSE) request's logger: every line carries its reqId. */
    private readonly log: FastifyBaseLogger,
    private readonly address: string,
    /** The principal's id, when the upgrade (or SSE request) carried a token. */
    private principal: string | undefined,
  ) {}

  /** The principal's id (never its token), once known: at the upgrade, or from the `auth` message. */
  authenticated(principalId: string): void {
    this.principal = principalId;
  }

  opened(): void {
    this.log.info({ stream: this.kind, address: this.address, principal: this.principal ?? null }, 'stream open');
  }

  /** One message written to the peer (heartbeats are not counted), `bytes` as written on the wire. */
  sent(bytes: number): void {
    this.frames++;
    this.bytes += bytes;
    this.totals.frames++;
    this.totals.bytes += bytes;
  }

  /** One event sent from the store (a replay or a catch-up), not from the live feed. */
  replayedEvent(): void {
    this.replayed++;
    this.totals.replayed++;
  }

  subscribed(session: string): void {
    this.subscribes++;
    if (this.sessions.length < LOGGED_SESSIONS && !this.sessions.includes(session)) this.sessions.push(session);
  }

  slowConsumer(): void {
    this.totals.slowConsumerCloses++;
  }

  /** The connection ended with `code` (the WebSocket close code; docs/operations.md for SSE). */
  closed(code: number, reason: string): void {
    if (this.done) return;
    this.done = true;
    const label = closeCodeLabel(code);
    this.totals.closes.set(label, (this.totals.closes.get(label) ?? 0) + 1);
    this.log.info(
      {
        stream: this.kind,
        address: this.address,
        principal: this.principal ?? null,
        sessions: this.sessions,
        subscribes: this.subscribes,
        duration_ms: Date.now() - this.startedAt,
        frames: this.frames,
        bytes: this.bytes,
        replayed: this.replayed,
        code,
        reason,
      },
      'stream closed',
    );
  }
}
