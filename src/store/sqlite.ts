/**
 * The `sqlite:PATH` backend, the embedded default. WAL with synchronous=FULL: a commit is on disk
 * before its promise resolves, so a 202 survives `kill -9` (and power loss) at any instant.
 *
 * Group commit: writes submitted in the same event-loop turn share one transaction, flushed from
 * `setImmediate`; each write runs in its own savepoint so that one failing write rolls back alone,
 * and every write's promise settles only after the shared commit. One fsync then serves many
 * requests, which is what lets durable ingest keep pace with a bare route.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { ack, EMPTY_HEADS, Ledger, type CallRecord, type Clock, type LedgerTx, type SessionHeads } from './ledger.js';
import { Listeners } from './listeners.js';
import {
  StoreUnavailableError,
  type AckOutcome,
  type CompleteCallInput,
  type CompleteCallOutcome,
  type EventPage,
  type EventRecord,
  type QueueEntry,
  type QueuePage,
  type StartCallInput,
  type StartCallOutcome,
  type Store,
  type StoreListener,
  type StoreOptions,
} from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  event_head INTEGER NOT NULL,
  queue_head INTEGER NOT NULL,
  committed INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  session TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  frame TEXT NOT NULL,
  PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS queue (
  session TEXT NOT NULL,
  queue_seq INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  args TEXT,
  result TEXT NOT NULL,
  execution_time TEXT NOT NULL,
  is_error INTEGER NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (session, queue_seq)
);
CREATE TABLE IF NOT EXISTS calls (
  session TEXT NOT NULL,
  call_id TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (session, call_id)
);
`;

interface QueueRow {
  queue_seq: number;
  call_id: string;
  name: string;
  args: string | null;
  result: string;
  execution_time: string;
  is_error: number;
  received_at: string;
}

interface BatchOutcome {
  outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>;
  events: EventRecord[];
  queues: Map<string, number>;
}

interface PendingWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private db!: Database.Database;
  private tx!: LedgerTx;
  private statements!: ReturnType<SqliteStore['prepare']>;
  /** Runs one write in a savepoint (better-sqlite3 nests transactions as savepoints). */
  private savepoint!: (run: () => unknown) => unknown;
  private epoch = '';
  private readonly ledger: Ledger;
  private readonly listeners = new Listeners();
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  /** Events and queue growth of the batch being written, announced after its commit. */
  private batchEvents: EventRecord[] = [];
  private batchQueues = new Map<string, number>();

  constructor(
    private readonly path: string,
    options: StoreOptions,
    clock?: Clock,
  ) {
    this.ledger = new Ledger(options.historySize, clock);
  }

  async open(): Promise<void> {
    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    this.db = new Database(this.path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    // The epoch names this database file: its event logs are lost only if the file is.
    this.db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run('epoch', randomUUID());
    this.epoch = (this.db.prepare('SELECT value FROM meta WHERE key = ?').get('epoch') as { value: string }).value;
    this.statements = this.prepare();
    this.savepoint = this.db.transaction((run: () => unknown) => run());
    this.tx = this.ledgerTx();
  }

  async close(): Promise<void> {
    if (!this.db?.open) return;
    this.flush();
    this.db.close();
  }

  async isReady(): Promise<boolean> {
    return this.db?.open === true;
  }

  startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    return this.write(() => {
      const outcome = this.ledger.startCall(this.tx, session, input);
      if (outcome.status === 'created') this.batchEvents.push(outcome.event);
      return outcome;
    });
  }

  completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    return this.write(() => {
      const outcome = this.ledger.completeCall(this.tx, session, input);
      if (outcome.status === 'created') {
        this.batchEvents.push(outcome.event);
        this.batchQueues.set(session, outcome.queueSeq);
      }
      return outcome;
    });
  }

  appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord> {
    return this.write(() => {
      const event = this.ledger.appendEvent(this.tx, session, type, dataJson);
      this.batchEvents.push(event);
      return event;
    });
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    this.assertOpen();
    const heads = this.tx.heads(session);
    const rows = this.statements.readQueue.all(session, after ?? heads.committed, limit) as QueueRow[];
    return {
      session,
      committed: heads.committed,
      head: heads.queueHead,
      entries: rows.map((r) => ({
        queueSeq: r.queue_seq,
        callId: r.call_id,
        name: r.name,
        argsJson: r.args,
        resultJson: r.result,
        executionTimeJson: r.execution_time,
        isError: r.is_error === 1,
        receivedAt: r.received_at,
      })),
    };
  }

  ack(session: string, through: number): Promise<AckOutcome> {
    return this.write(() => ack(this.tx, session, through));
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    this.assertOpen();
    const heads = this.tx.heads(session);
    const oldest = (this.statements.oldestEvent.get(session) as { oldest: number | null }).oldest ?? 0;
    const rows = this.statements.readEvents.all(session, after, limit) as { seq: number; type: string; frame: string }[];
    return {
      session,
      epoch: this.epoch,
      head: heads.eventHead,
      oldest,
      events: rows.map((r) => ({ session, seq: r.seq, type: r.type, frame: r.frame })),
    };
  }

  async queueDepth(): Promise<number> {
    this.assertOpen();
    return (this.statements.queueDepth.get() as { depth: number | null }).depth ?? 0;
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

  private assertOpen(): void {
    if (!this.db?.open) throw new StoreUnavailableError('the sqlite store is closed');
  }

  private write<T>(run: () => T): Promise<T> {
    if (!this.db?.open) return Promise.reject(new StoreUnavailableError('the sqlite store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs every pending write in one transaction, then settles them and announces what committed. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let done: BatchOutcome;
    try {
      // Fast path without savepoints (they cost more than the rest of a write). If any write
      // throws, the whole transaction rolls back and the batch runs again, one savepoint a write,
      // so that the failing write rolls back alone. Nothing of the first try was announced.
      done = this.runBatch(batch, false) ?? (this.runBatch(batch, true) as BatchOutcome);
    } catch (error) {
      const failure = new StoreUnavailableError(`sqlite commit failed: ${(error as Error).message}`, { cause: error });
      for (const write of batch) write.reject(failure);
      return;
    }
    batch.forEach((write, k) => {
      const outcome = done.outcomes[k];
      if (outcome?.ok) write.resolve(outcome.value);
      else write.reject(outcome?.error);
    });
    this.listeners.events(done.events);
    for (const [s, head] of done.queues) this.listeners.queue(s, head);
  }

  /** One transaction over `batch`; undefined when a write threw and `isolate` was off. */
  private runBatch(batch: PendingWrite[], isolate: boolean): BatchOutcome | undefined {
    const done: BatchOutcome = { outcomes: [], events: [], queues: new Map() };
    const savepoint = this.savepoint;
    const aborted = new Error('a write failed; retrying the batch with savepoints');
    try {
      this.db.transaction(() => {
        for (const write of batch) {
          this.batchEvents = [];
          this.batchQueues = new Map();
          try {
            done.outcomes.push({ ok: true, value: isolate ? savepoint(write.run) : write.run() });
            done.events.push(...this.batchEvents);
            for (const [s, head] of this.batchQueues) done.queues.set(s, head);
          } catch (error) {
            if (!isolate) throw aborted;
            done.outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      if (error === aborted) return undefined;
      throw error;
    }
    return done;
  }

  private prepare() {
    const db = this.db;
    return {
      heads: db.prepare('SELECT event_head, queue_head, committed FROM sessions WHERE id = ?'),
      setHeads: db.prepare(
        `INSERT INTO sessions (id, event_head, queue_head, committed) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET event_head = excluded.event_head, queue_head = excluded.queue_head, committed = excluded.committed`,
      ),
      call: db.prepare('SELECT record FROM calls WHERE session = ? AND call_id = ?'),
      putCall: db.prepare(
        'INSERT INTO calls (session, call_id, record) VALUES (?, ?, ?) ON CONFLICT (session, call_id) DO UPDATE SET record = excluded.record',
      ),
      insertEvent: db.prepare('INSERT INTO events (session, seq, type, frame) VALUES (?, ?, ?, ?)'),
      trimEvents: db.prepare('DELETE FROM events WHERE session = ? AND seq < ?'),
      insertQueue: db.prepare(
        `INSERT INTO queue (session, queue_seq, call_id, name, args, result, execution_time, is_error, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      readQueue: db.prepare(
        `SELECT queue_seq, call_id, name, args, result, execution_time, is_error, received_at FROM queue
         WHERE session = ? AND queue_seq > ? ORDER BY queue_seq LIMIT ?`,
      ),
      readEvents: db.prepare('SELECT seq, type, frame FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?'),
      oldestEvent: db.prepare('SELECT MIN(seq) AS oldest FROM events WHERE session = ?'),
      queueDepth: db.prepare('SELECT SUM(queue_head - committed) AS depth FROM sessions'),
    };
  }

  private ledgerTx(): LedgerTx {
    const st = this.statements;
    return {
      heads(session: string): SessionHeads {
        const row = st.heads.get(session) as { event_head: number; queue_head: number; committed: number } | undefined;
        return row ? { eventHead: row.event_head, queueHead: row.queue_head, committed: row.committed } : EMPTY_HEADS;
      },
      setHeads(session, h) {
        st.setHeads.run(session, h.eventHead, h.queueHead, h.committed);
      },
      call(session, callId): CallRecord | undefined {
        const row = st.call.get(session, callId) as { record: string } | undefined;
        return row ? (JSON.parse(row.record) as CallRecord) : undefined;
      },
      putCall(session, callId, record) {
        st.putCall.run(session, callId, JSON.stringify(record));
      },
      insertEvent(e) {
        st.insertEvent.run(e.session, e.seq, e.type, e.frame);
      },
      trimEvents(session, keepFrom) {
        st.trimEvents.run(session, keepFrom);
      },
      insertQueueEntry(session, q: QueueEntry) {
        st.insertQueue.run(session, q.queueSeq, q.callId, q.name, q.argsJson, q.resultJson, q.executionTimeJson, q.isError ? 1 : 0, q.receivedAt);
      },
    };
  }
}
