/**
 * The `sqlite:PATH` backend, the embedded default (WAL, synchronous=FULL).
 *
 * Writes go to a writer thread (sqlite-worker.ts, which runs sqlite-writer.ts); reads run here on a
 * connection of their own (sqlite-reader.ts). Group commit: the writes that arrive while the
 * writer is busy form one batch, and the writer commits every batch waiting for it in one
 * transaction, with one fsync. Each write's promise settles only after the commit that holds it,
 * so a 202 survives `kill -9` at any instant, and listeners hear of events only after their commit.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { Listeners } from './listeners.js';
import { SqliteReader } from './sqlite-reader.js';
import type { WriterOptions, WriterReply } from './sqlite-worker.js';
import type { WriteOp, WriteResult, WriteValue } from './sqlite-writer.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventPage,
  type EventRecord,
  type QueuePage,
  type StartCallInput,
  type StartCallOutcome,
  type Store,
  type StoreListener,
  type StoreOptions,
} from './types.js';

interface PendingWrite {
  op: WriteOp;
  resolve: (value: WriteValue) => void;
  reject: (error: Error) => void;
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
  private readonly listeners = new Listeners();
  private queued: PendingWrite[] = [];
  /** Batches handed to the writer and not answered yet, oldest first, by id. */
  private readonly inFlight = new Map<number, PendingWrite[]>();
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
    this.reader = new SqliteReader(this.path, epoch);
  }

  close(): Promise<void> {
    if (!this.reader) return Promise.resolve();
    this.closing ??= this.shutdown();
    return this.closing;
  }

  async isReady(): Promise<boolean> {
    return this.reader?.open === true && this.closing === undefined && this.worker !== undefined && this.writerDown === undefined;
  }

  startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    return this.write({ kind: 'start', session, input }) as Promise<StartCallOutcome>;
  }

  completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    return this.write({ kind: 'complete', session, input }) as Promise<CompleteCallOutcome>;
  }

  appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord> {
    return this.write({ kind: 'event', session, type, dataJson }) as Promise<EventRecord>;
  }

  ack(session: string, through: number): Promise<AckOutcome> {
    return this.write({ kind: 'ack', session, through }) as Promise<AckOutcome>;
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    return this.openReader().readQueue(session, after, limit);
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    return this.openReader().readEvents(session, after, limit);
  }

  async queueDepth(): Promise<number> {
    return this.openReader().queueDepth();
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

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

  private write(op: WriteOp): Promise<WriteValue> {
    if (this.closing || !this.reader?.open) return Promise.reject(new StoreUnavailableError('the sqlite store is closed'));
    if (this.writerDown) return Promise.reject(new StoreUnavailableError(this.writerDown));
    return new Promise<WriteValue>((resolve, reject) => {
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

  /** Hands every queued write to the writer as one batch, unless enough batches are out. */
  private send(): void {
    if (this.queued.length === 0 || !this.worker || this.inFlight.size >= MAX_BATCHES_IN_FLIGHT) return;
    const id = this.nextBatchId++;
    const batch = this.queued;
    this.queued = [];
    this.inFlight.set(id, batch);
    // Referenced while a batch is out, so that a pending write keeps the process alive.
    this.worker.ref();
    this.worker.postMessage({ id, ops: batch.map((w) => w.op) });
  }

  /** The writer committed (or failed) these batches: settle their writes, announce what committed. */
  private settle(reply: WriterReply): void {
    if (!('ids' in reply)) return;
    const writes: PendingWrite[] = [];
    for (const id of reply.ids) {
      writes.push(...(this.inFlight.get(id) ?? []));
      this.inFlight.delete(id);
    }
    if ('failed' in reply) {
      const failure = new StoreUnavailableError(`sqlite commit failed: ${reply.failed}`);
      for (const write of writes) write.reject(failure);
    } else {
      this.announce(writes, reply.results);
    }
    this.send();
    if (this.inFlight.size === 0) {
      this.worker?.unref();
      this.notifyIdle();
    }
  }

  private announce(batch: PendingWrite[], results: WriteResult[]): void {
    const events: EventRecord[] = [];
    const queues = new Map<string, number>();
    batch.forEach((write, k) => {
      const result = results[k];
      if (!result?.ok) {
        write.reject(result ? writeError(result.error) : new StoreUnavailableError('the sqlite writer lost a write'));
        return;
      }
      const value = result.value;
      write.resolve(value);
      if (write.op.kind === 'event') events.push(value as EventRecord);
      if ('status' in value && value.status === 'created') {
        events.push(value.event);
        if ('queueSeq' in value) queues.set(write.op.session, value.queueSeq);
      }
    });
    this.listeners.events(events);
    for (const [session, head] of queues) this.listeners.queue(session, head);
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
