/**
 * The `sqlite:PATH` backend, the embedded default (WAL, synchronous=FULL).
 *
 * Writes go to a writer thread (sqlite-worker.ts, which runs sqlite-writer.ts); reads run here on a
 * connection of their own (sqlite-reader.ts). Group commit: the writes that arrive while the
 * writer is busy form one batch, and the writer commits every batch waiting for it in one
 * transaction, with one fsync. Each write's promise settles only after the commit that holds it,
 * so a 202 survives `kill -9` at any instant, and listeners hear of events only after their commit.
 * A small batch that finds the writer thread idle is committed on this thread instead
 * (sqlite-inline.ts), the same way: at low load the hand-over costs more than the write.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { Listeners, localFeed } from './listeners.js';
import { InlineCommits } from './sqlite-inline.js';
import { SqliteReader } from './sqlite-reader.js';
import type { WriterBatch, WriterOptions, WriterReply } from './sqlite-worker.js';
import type { WriteResult } from './sqlite-writer.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type Applied,
  type WriteOp,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventPage,
  type EventKey,
  type EventRecord,
  type KeyedEventOutcome,
  type OpenCall,
  type StoredQueueEntry,
  type QueuePage,
  type SessionList,
  type SessionListQuery,
  type SessionSummary,
  type StartCallInput,
  type SweepPolicy,
  type SweepResult,
  type StartCallOutcome,
  type Store,
  type StoreListener,
  type StoreOptions,
} from './types.js';

interface PendingWrite {
  op: WriteOp;
  resolve: (applied: Applied) => void;
  reject: (error: Error) => void;
}

/** The writer answered a write with the outcome of another kind: a bug, never a client's fault. */
function mismatch(op: WriteOp, applied: Applied): never {
  throw new Error(`the sqlite writer answered a ${op.kind} write with a ${applied.kind} outcome`);
}

/** Under tsx (tests, `npm run dev`) this module is TypeScript, and so is its worker. */
const UNDER_TSX = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(UNDER_TSX ? './sqlite-worker.ts' : './sqlite-worker.js', import.meta.url);

/** The writer thread; under tsx its loader is registered in the thread first (tsx does not). */
function writerThread(workerData: WriterOptions): Worker {
  if (!UNDER_TSX) return new Worker(WORKER_URL, { workerData });
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}
/**
 * Batches handed to the writer at once: one being committed and the next one waiting, so the
 * writer never idles for the main thread, while every write that comes meanwhile joins the batch
 * that waits here (one message per batch: a message costs a thread wake-up and a copy).
 */
const MAX_BATCHES_IN_FLIGHT = 2;
/** How long to wait before starting a new writer thread after one stopped unexpectedly. */
const RESTART_DELAY_MS = 1000;

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private worker: Worker | undefined;
  private reader: SqliteReader | undefined;
  /** Commits of small batches on this thread while the writer thread is idle (off: options.inlineCommits false). */
  private inline: InlineCommits | undefined;
  private readonly listeners = new Listeners();
  private queued: PendingWrite[] = [];
  /** Batches handed to the writer and not answered yet, oldest first, by id. */
  private readonly inFlight = new Map<number, PendingWrite[]>();
  /** Why the last commit failed, until one succeeds (the disk is full, …): /readyz says 503 meanwhile. */
  private commitFailure: string | undefined;
  /** The readiness probe in flight, shared by every /readyz that asks meanwhile. */
  private probing: Promise<boolean> | undefined;
  /** Probe batches in flight, by id: told whether their commit succeeded. */
  private readonly probes = new Map<number, (committed: boolean) => void>();
  /** When each batch in flight was handed to the writer (performance.now()): the commit latency. */
  private readonly sentAt = new Map<number, number>();
  private sendScheduled = false;
  private nextBatchId = 1;
  /** Why writes are refused while the writer thread is being restarted. */
  private writerDown: string | undefined;
  private closing: Promise<void> | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly path: string,
    private readonly options: StoreOptions,
  ) {}

  async open(): Promise<void> {
    const epoch = await this.startWriter();
    // Opened after the thread has created the file and its tables.
    if (this.options.inlineCommits !== false) this.inline = new InlineCommits(this.path, this.options.historySize);
    this.reader = new SqliteReader(this.path, epoch);
  }

  close(): Promise<void> {
    if (!this.reader) return Promise.resolve();
    this.closing ??= this.shutdown();
    return this.closing;
  }

  async isReady(): Promise<boolean> {
    if (!(this.reader?.open === true && this.closing === undefined && this.worker !== undefined && this.writerDown === undefined)) return false;
    // Commits are failing (a full disk): ready again only once a probe commit succeeds.
    if (this.commitFailure !== undefined) return this.probe();
    return true;
  }

  async startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    const op = { kind: 'start', session, input } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    const op = { kind: 'complete', session, input } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord> {
    const op = { kind: 'event', session, type, dataJson } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async appendKeyedEvent(session: string, type: string, dataJson: string, key: EventKey): Promise<KeyedEventOutcome> {
    const op = { kind: 'keyedEvent', session, type, dataJson, key } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async ack(session: string, through: number): Promise<AckOutcome> {
    const op = { kind: 'ack', session, through } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    return this.openReader().readQueue(session, after, limit);
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    return this.openReader().readEvents(session, after, limit);
  }

  async toolResult(session: string, callId: string): Promise<StoredQueueEntry | undefined> {
    return this.openReader().toolResult(session, callId);
  }

  async queueDepth(): Promise<number> {
    return this.openReader().queueDepth();
  }

  async listSessions(query: SessionListQuery): Promise<SessionList> {
    return this.openReader().listSessions(query);
  }

  async sessionSummary(session: string): Promise<SessionSummary | undefined> {
    return this.openReader().sessionSummary(session);
  }

  async sweep(policy: SweepPolicy): Promise<SweepResult> {
    const op = { kind: 'sweep', session: '', policy } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  async deleteSession(session: string): Promise<OpenCall[] | undefined> {
    const op = { kind: 'delete', session } as const;
    const applied = await this.write(op);
    return applied.kind === op.kind ? applied.value : mismatch(op, applied);
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

  readonly follow = localFeed.follow;
  readonly unfollow = localFeed.unfollow;
  readonly followSessions = localFeed.followSessions;
  readonly unfollowSessions = localFeed.unfollowSessions;

  private openReader(): SqliteReader {
    if (!this.reader?.open) throw new StoreUnavailableError('the sqlite store is closed');
    return this.reader;
  }

  /** Starts the writer thread; resolves with the file's epoch once it has opened the file. */
  private async startWriter(): Promise<string> {
    const worker = writerThread({ path: this.path, historySize: this.options.historySize });
    // `once` rejects on an 'error' event; a thread that ends without either must not hang open().
    const ended = once(worker, 'exit').then(() => [{ openFailed: 'the writer thread ended before opening the file' }]);
    const [first] = (await Promise.race([once(worker, 'message'), ended])) as [WriterReply];
    if (!('ready' in first)) {
      await worker.terminate();
      // The message is the reason the file could not be opened (a path, a permission).
      throw new Error(`sqlite store ${this.path}: ${'openFailed' in first ? first.openFailed : 'the writer thread did not start'}`);
    }
    worker.on('message', (reply: WriterReply) => this.settle(reply));
    worker.on('error', (error) => process.emitWarning(error));
    worker.on('exit', () => this.writerStopped(worker));
    worker.unref();
    this.worker = worker;
    return first.ready;
  }

  /** The writer thread ended: expected at close; otherwise fail what it held and start another. */
  private writerStopped(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    if (this.closing) return;
    this.writerDown = 'the sqlite writer thread stopped; it is being restarted';
    const lost = [...[...this.inFlight.values()].flat(), ...this.queued];
    this.inFlight.clear();
    this.sentAt.clear();
    for (const probed of this.probes.values()) probed(false);
    this.probes.clear();
    this.queued = [];
    // A batch in flight may or may not have committed: like a lost reply, its writers get 503 and
    // may retry (tool-calls and tool-results are idempotent by call_id).
    for (const write of lost) write.reject(new StoreUnavailableError(this.writerDown));
    this.notifyIdle();
    const restart = (): void => {
      if (this.closing) return;
      this.startWriter().then(
        () => {
          this.writerDown = undefined;
        },
        (error: Error) => {
          this.writerDown = `the sqlite writer thread could not restart: ${error.message}`;
          setTimeout(restart, RESTART_DELAY_MS).unref();
        },
      );
    };
    setTimeout(restart, RESTART_DELAY_MS).unref();
  }

  private write(op: WriteOp): Promise<Applied> {
    if (this.closing || !this.reader?.open) return Promise.reject(new StoreUnavailableError('the sqlite store is closed'));
    if (this.writerDown) return Promise.reject(new StoreUnavailableError(this.writerDown));
    return new Promise<Applied>((resolve, reject) => {
      this.queued.push({ op, resolve, reject });
      if (!this.sendScheduled) {
        // Wait for the rest of this turn's writes, so that they share the batch.
        this.sendScheduled = true;
        setImmediate(() => {
          this.sendScheduled = false;
          this.send();
        });
      }
    });
  }

  /**
   * Commits every queued write as one batch: a small batch here (sqlite-inline.ts), once the writer
   * thread has no batch (until then it waits: settle() calls send() again); any other handed to
   * the thread, unless enough batches are out.
   */
  private send(): void {
    if (this.queued.length === 0 || !this.worker || this.inFlight.size >= MAX_BATCHES_IN_FLIGHT) return;
    const ops = this.queued.map((w) => w.op);
    if (this.inline?.takes(ops)) {
      if (this.inFlight.size > 0) return;
      const batch = this.queued;
      this.queued = [];
      this.commitHere(batch, ops);
      return;
    }
    const batch = this.queued;
    this.queued = [];
    const id = this.nextBatchId++;
    this.inFlight.set(id, batch);
    this.sentAt.set(id, performance.now());
    // Referenced while a batch is out, so that a pending write keeps the process alive.
    this.worker.ref();
    this.worker.postMessage({ id, ops });
  }

  /** Applies a batch on this thread (the writer thread is idle): settled as a reply from it would be. */
  private commitHere(batch: PendingWrite[], ops: WriteOp[]): void {
    const started = performance.now();
    let outcome: { results: WriteResult[] } | { failed: string };
    try {
      outcome = { results: (this.inline as InlineCommits).apply(ops) };
    } catch (error) {
      outcome = { failed: (error as Error).message };
    }
    this.concluded(batch, outcome, started);
    this.notifyIdle();
  }

  /**
   * One commit's end, on either thread: its writes rejected when it failed (and /readyz told), else
   * settled and announced, and its size and time (since `since`, performance.now()) reported.
   */
  private concluded(writes: PendingWrite[], outcome: { results: WriteResult[] } | { failed: string }, since: number): void {
    if ('failed' in outcome) {
      this.commitFailure = outcome.failed;
      const failure = new StoreUnavailableError(`sqlite commit failed: ${outcome.failed}`);
      for (const write of writes) write.reject(failure);
      return;
    }
    this.commitFailure = undefined;
    if (since !== Infinity && writes.length > 0) this.options.telemetry?.committed(writes.length, (performance.now() - since) / 1000);
    this.announce(writes, outcome.results);
  }

  /** A commit of a probe write alone: does the backend take writes again? */
  private probe(): Promise<boolean> {
    this.probing ??= new Promise<boolean>((resolve) => {
      if (!this.worker) return resolve(false);
      const id = this.nextBatchId++;
      this.probes.set(id, resolve);
      this.inFlight.set(id, []);
      this.sentAt.set(id, performance.now());
      this.worker.ref();
      const batch: WriterBatch = { id, ops: [], probe: true };
      this.worker.postMessage(batch);
    }).finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** The writer committed (or failed) these batches: settle their writes, announce what committed. */
  private settle(reply: WriterReply): void {
    if (!('ids' in reply)) return;
    const writes: PendingWrite[] = [];
    let firstSent = Infinity;
    for (const id of reply.ids) {
      writes.push(...(this.inFlight.get(id) ?? []));
      this.inFlight.delete(id);
      firstSent = Math.min(firstSent, this.sentAt.get(id) ?? Infinity);
      this.sentAt.delete(id);
    }
    for (const id of reply.ids) {
      this.probes.get(id)?.(!('failed' in reply));
      this.probes.delete(id);
    }
    // The writer joins the batches waiting for it into one transaction: one commit of them all.
    this.concluded(writes, reply, firstSent);
    this.send();
    if (this.inFlight.size === 0) {
      this.worker?.unref();
      this.notifyIdle();
    }
  }

  /** Settles each write of a committed batch, then tells the listeners what the batch did. */
  private announce(batch: PendingWrite[], results: WriteResult[]): void {
    const applied: Applied[] = [];
    batch.forEach((write, k) => {
      const result = results[k];
      if (!result?.ok) {
        write.reject(result ? writeError(result.error) : new StoreUnavailableError('the sqlite writer lost a write'));
        return;
      }
      write.resolve(result.applied);
      applied.push(result.applied);
    });
    this.listeners.announce(applied);
  }

  private notifyIdle(): void {
    if (this.inFlight.size > 0 || this.queued.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Finishes the writes already submitted, then closes the writer thread and the reader. */
  private async shutdown(): Promise<void> {
    if (this.inFlight.size > 0 || this.queued.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const worker = this.worker;
    if (worker) {
      const exited = once(worker, 'exit');
      worker.ref();
      worker.postMessage('close');
      await exited;
    }
    this.inline?.close();
    this.reader?.close();
  }
}

/** A write's own failure, rebuilt on this side of the thread boundary. */
function writeError(error: { name: string; message: string }): Error {
  if (error.name === 'StoreUnavailableError') return new StoreUnavailableError(error.message);
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  return rebuilt;
}
