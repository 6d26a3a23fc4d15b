/**
 * Commits on the main thread whenever the writer thread has no batch (sqlite.ts). At one or a few
 * connections each batch holds one to a few writes, and handing it to the writer thread costs more
 * than the write: two thread wake-ups, a copy each way, and the main thread woken again for the
 * reply (bench/durable-write.ts: ~0.65x the server CPU per result at 4 connections). So a small
 * batch that finds the thread idle is applied here, by a second SqliteWriter on the same file,
 * with the same transaction, the same synchronous=FULL commit and the same results.
 *
 * Under load too: a commit here holds the event loop for its fsync, as the floor of a durable
 * write does (one transaction per event-loop turn, bench/bare-durable-route.ts), and costs less CPU
 * per write than the thread's (~105 against ~135 µs per 2 KiB result at 50 connections).
 *
 * The two writers never overlap: a batch is applied here only when no batch is out to the thread,
 * and nothing is handed to the thread while one is applied here (it is synchronous). A small batch
 * that finds the thread busy waits for it to finish, then is applied here.
 *
 * What stays on the thread: sweeps and deletions (they may touch many rows), batches with much
 * text to write, which would hold the event loop (streams, heartbeats, other requests) for longer
 * than a commit's fsync. WAL checkpoints run where SQLite runs them, in the commit that passes 1,000
 * pages of WAL, here too: leaving them to the thread (a PASSIVE checkpoint asked for every 64 or 128
 * commits) was measured 1.35x and 1.94x the CPU per result at one connection, most likely because a
 * checkpoint that runs beside a stream of commits does not finish before the next commit, so the
 * WAL does not start over and commits keep extending the file.
 *
 * A commit here that takes longer than SLOW_COMMIT_MS (a disk that has become slow) sends every
 * batch to the thread for PAUSE_AFTER_SLOW_MS, so a stalling disk stalls the writes, not the server.
 */
import { SqliteWriter, type WriteResult } from './sqlite-writer.js';
import type { WriteOp } from './types.js';

/** Text (UTF-16 units) a batch may carry and still be committed here. */
const MAX_INLINE_CHARS = 256 * 1024;
/** Above a checkpoint's usual time, so that only a disk that stalls trips it. */
const SLOW_COMMIT_MS = 50;
const PAUSE_AFTER_SLOW_MS = 2_000;

/** The text a write carries into the file, roughly: what its commit costs grows with. */
function charsCarried(op: WriteOp): number {
  switch (op.kind) {
    case 'complete':
      return op.input.resultJson.length + (op.input.argsJson?.length ?? 0) + op.input.completed.previewJson.length;
    case 'start':
      return (op.input.argsJson?.length ?? 0) + op.input.args.echo.length;
    case 'event':
    case 'keyedEvent':
      return op.dataJson.length;
    case 'ack':
      return 0;
    case 'sweep':
    case 'delete':
      return Infinity;
  }
}

export class InlineCommits {
  private readonly writer: SqliteWriter;
  private pausedUntil = 0;

  constructor(path: string, historySize: number) {
    this.writer = new SqliteWriter(path, historySize);
  }

  /** Whether `ops` should be committed here (now, or once the thread has finished its batches). */
  takes(ops: readonly WriteOp[]): boolean {
    if (this.paused()) return false;
    let chars = 0;
    for (const op of ops) {
      chars += charsCarried(op);
      if (chars > MAX_INLINE_CHARS) return false;
    }
    return true;
  }

  /** Whether a slow commit here has sent every batch to the thread for a while. */
  private paused(): boolean {
    return performance.now() < this.pausedUntil;
  }

  /** Applies `ops` in one transaction, as the writer thread would; throws when the commit fails. */
  apply(ops: readonly WriteOp[]): WriteResult[] {
    const started = performance.now();
    try {
      return this.writer.apply(ops);
    } finally {
      if (performance.now() - started > SLOW_COMMIT_MS) this.pausedUntil = performance.now() + PAUSE_AFTER_SLOW_MS;
    }
  }

  close(): void {
    this.writer.close();
  }
}
