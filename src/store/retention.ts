/**
 * The retention sweep (docs/protocol.md section 9), on every backend: every interval, one pass
 * over the store in bounded slices (Store.sweep), with a turn of the event loop between slices so
 * that writes and reads go on while it runs. A pass that fails (the store unreachable) is left
 * and the next interval starts a new one.
 */
import type { OpenCall, Store, SweepPolicy } from './types.js';

/** Sessions visited, and entries removed, at most per slice. */
export const SLICE = { sessions: 100, entries: 1000 } as const;

export interface RetentionSettings {
  /** Acknowledged entries older than this (ms) are removed; 0 keeps them. */
  retainAckedMs: number;
  /** Sessions with no event for this long (ms) are deleted; 0 keeps them. */
  sessionTtlMs: number;
}

export interface PassResult {
  entriesRemoved: number;
  sessionsRemoved: number;
  slices: number;
}

export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PassResult> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly settings: RetentionSettings,
    /** Told of each slice: what it removed, and the calls its deleted sessions still had open. */
    private readonly report: (slice: { entriesRemoved: number; sessionsRemoved: number; openCalls: OpenCall[] }) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.settings.retainAckedMs > 0 || this.settings.sessionTtlMs > 0;
  }

  /** Runs a pass every `intervalMs` (0: never by itself). */
  start(intervalMs: number): void {
    if (!this.enabled || intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (!this.running) this.pass().catch((err: unknown) => process.emitWarning(`retention pass failed: ${(err as Error).message}`));
    }, intervalMs);
    this.timer.unref();
  }

  /** One whole pass (the one under way, if there is one). */
  pass(): Promise<PassResult> {
    this.running ??= this.sweepAll().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the timer and waits for the pass under way to end at its next slice. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async sweepAll(): Promise<PassResult> {
    const now = this.clock();
    const { retainAckedMs, sessionTtlMs } = this.settings;
    const base: SweepPolicy = {
      ...SLICE,
      ...(retainAckedMs > 0 ? { ackedBefore: now - retainAckedMs } : {}),
      ...(sessionTtlMs > 0 ? { inactiveBefore: now - sessionTtlMs } : {}),
    };
    const total: PassResult = { entriesRemoved: 0, sessionsRemoved: 0, slices: 0 };
    let cursor: string | undefined;
    for (;;) {
      const slice = await this.store.sweep(cursor === undefined ? base : { ...base, cursor });
      total.slices++;
      total.entriesRemoved += slice.entriesRemoved;
      total.sessionsRemoved += slice.deleted.length;
      this.report({ entriesRemoved: slice.entriesRemoved, sessionsRemoved: slice.deleted.length, openCalls: slice.openCalls });
      // Expired sessions come from the activity index a slice at a time: a full one may leave more.
      const moreExpired = slice.deleted.length === SLICE.sessions;
      cursor = slice.cursor;
      if ((cursor === undefined && !moreExpired) || this.stopped) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  }
}
