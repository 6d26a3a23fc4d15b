/**
 * The writing half of the sqlite backend, synchronous, run in the writer thread (sqlite-worker.ts).
 *
 * Group commit: a batch of writes shares one transaction and so one fsync. Each write is a plain
 * description (`WriteOp`), applied by the shared Ledger; a write that throws rolls back alone (the
 * batch is run again with one savepoint per write, which costs more than the rest of a write, so
 * only then). Session heads and history trims are kept in memory for the batch and written once
 * per session at its end: a batch of 50 results on one session updates its heads row once.
 */
import type Database from 'better-sqlite3';
import { EMPTY_HEADS, Ledger, openCallsOf, type CallRecord, type LedgerTx, type SessionHeads } from './ledger.js';
import { headsReader, nextEpochReader, openForWriting } from './sqlite-schema.js';
import type { Applied, EventRecord, OpenCall, QueueEntry, WriteOp } from './types.js';

/** One write's result: what it did, or why it failed (an error's name and message cross threads). */
export type WriteResult = { ok: true; applied: Applied } | { ok: false; error: { name: string; message: string } };

/** What a readiness probe writes: about as much as a modest write, in fresh pages. */
const PROBE_BYTES = 16 * 1024;
const PROBE_FILL = '0'.repeat(PROBE_BYTES);

export class SqliteWriter {
  readonly epoch: string;
  private readonly db: Database.Database;
  private readonly ledger: Ledger;
  private readonly st: ReturnType<typeof prepare>;
  private readonly tx: LedgerTx;
  /** Runs one write in a savepoint (better-sqlite3 nests transactions as savepoints). */
  private readonly savepoint: (run: () => Applied) => Applied;
  /** Heads and trims of the batch so far, and of the write being applied. */
  private batchHeads = new Map<string, SessionHeads>();
  private batchTrims = new Map<string, number>();
  private writeHeads = new Map<string, SessionHeads>();
  private writeTrims = new Map<string, number>();

  constructor(path: string, historySize: number) {
    const { db, epoch } = openForWriting(path);
    this.db = db;
    this.epoch = epoch;
    this.ledger = new Ledger(historySize);
    this.st = prepare(db);
    this.tx = this.ledgerTx();
    this.savepoint = db.transaction((run: () => Applied) => run());
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Applies `ops` in one transaction, each write rolled back alone if it throws (see the file
   * comment); throws only when the transaction itself fails.
   */
  apply(ops: readonly WriteOp[], probe = false): WriteResult[] {
    return this.runBatch(ops, false, probe) ?? (this.runBatch(ops, true, probe) as WriteResult[]);
  }

  /**
   * undefined when a write threw and `isolate` was off: nothing was committed then. `probe` adds a
   * write of PROBE_BYTES to the transaction, so that it needs new pages on disk: after failed
   * commits (a full disk), readiness comes back only once such a commit succeeds.
   */
  private runBatch(ops: readonly WriteOp[], isolate: boolean, probe: boolean): WriteResult[] | undefined {
    const results: WriteResult[] = [];
    const aborted = new Error('a write failed; retrying the batch with savepoints');
    const applyOne = (op: WriteOp) => this.ledger.apply(this.tx, op);
    this.batchHeads = new Map();
    this.batchTrims = new Map();
    try {
      this.db.transaction(() => {
        for (const op of ops) {
          this.writeHeads.clear();
          this.writeTrims.clear();
          let applied: Applied;
          try {
            applied = isolate ? this.savepoint(() => applyOne(op)) : applyOne(op);
          } catch (error) {
            if (!isolate) throw aborted;
            // The savepoint rolled this write back; its heads and trims are dropped with it.
            results.push({ ok: false, error: { name: (error as Error).name, message: (error as Error).message } });
            continue;
          }
          for (const [s, h] of this.writeHeads) this.batchHeads.set(s, h);
          for (const [s, from] of this.writeTrims) this.batchTrims.set(s, from);
          results.push({ ok: true, applied });
        }
        for (const [s, h] of this.batchHeads) {
          // A session deleted in this batch (and not written again) keeps no row.
          if (h.createdAt === 0) this.st.deleteHeads.run(s);
          else this.st.setHeads.run(s, h.eventHead, h.queueHead, h.committed, h.epoch, h.createdAt, h.lastEventAt, h.openCalls, h.errors);
        }
        for (const [s, from] of this.batchTrims) this.st.trimEvents.run(s, from);
        if (probe) this.st.probe.run(`${Date.now()}:${PROBE_FILL}`);
      })();
    } catch (error) {
      if (error === aborted) return undefined;
      throw error;
    }
    return results;
  }

  private ledgerTx(): LedgerTx {
    const st = this.st;
    const committedHeads = headsReader(this.db);
    const nextEpoch = nextEpochReader(this.db, this.epoch);
    const pendingHeads = (session: string) => this.writeHeads.get(session) ?? this.batchHeads.get(session);
    const tx: LedgerTx = {
      nextEpoch,
      sweepSlice: (policy) => {
        const deleted: string[] = [];
        const openCalls: OpenCall[] = [];
        if (policy.inactiveBefore !== undefined) {
          for (const { id } of st.expired.all(policy.inactiveBefore, policy.sessions) as Array<{ id: string }>) {
            // A session written earlier in this batch is active again.
            if ((pendingHeads(id)?.lastEventAt ?? 0) >= policy.inactiveBefore) continue;
            const open = tx.removeSession(id);
            if (!open) continue;
            deleted.push(id);
            openCalls.push(...open);
          }
        }
        if (policy.ackedBefore === undefined) return { entriesRemoved: 0, deleted, openCalls };
        const cutoff = new Date(policy.ackedBefore).toISOString();
        const rows = st.ackedSessions.all(policy.cursor ?? '', policy.sessions) as Array<{ id: string; committed: number }>;
        let entriesRemoved = 0;
        for (const [k, row] of rows.entries()) {
          if (entriesRemoved >= policy.entries) return { entriesRemoved, deleted, openCalls, cursor: (rows[k - 1] as { id: string }).id };
          entriesRemoved += st.trimAcked.run(row.id, row.id, row.committed, cutoff, policy.entries - entriesRemoved).changes;
        }
        const last = rows[rows.length - 1];
        return rows.length === policy.sessions && last ? { entriesRemoved, deleted, openCalls, cursor: last.id } : { entriesRemoved, deleted, openCalls };
      },
      removeSession: (session) => {
        const existed = (this.writeHeads.get(session) ?? this.batchHeads.get(session) ?? committedHeads(session)).createdAt !== 0;
        if (!existed) return undefined;
        const records = (st.openCalls.all(session) as Array<{ call_id: string; record: string }>).map((r): [string, CallRecord] => [r.call_id, JSON.parse(r.record) as CallRecord]);
        for (const statement of [st.deleteEvents, st.deleteQueue, st.deleteCalls]) statement.run(session);
        st.countDeletion.run(session);
        // What the batch held of the old incarnation must not reach the file after this.
        this.writeHeads.set(session, EMPTY_HEADS);
        this.writeTrims.delete(session);
        this.batchTrims.delete(session);
        return openCallsOf(session, records);
      },
      heads: (session) => {
        const pending = this.writeHeads.get(session) ?? this.batchHeads.get(session);
        if (pending) return pending;
        return committedHeads(session);
      },
      setHeads: (session, heads) => {
        this.writeHeads.set(session, heads);
      },
      trimEvents: (session, keepFrom) => {
        this.writeTrims.set(session, Math.max(keepFrom, this.writeTrims.get(session) ?? this.batchTrims.get(session) ?? 0));
      },
      call(session, callId): CallRecord | undefined {
        const row = st.call.get(session, callId) as { record: string } | undefined;
        return row ? (JSON.parse(row.record) as CallRecord) : undefined;
      },
      putCall(session, callId, record) {
        st.putCall.run(session, callId, JSON.stringify(record));
      },
      insertEvent(e: EventRecord) {
        st.insertEvent.run(e.session, e.seq, e.type, e.frame);
      },
      insertQueueEntry(session, q: QueueEntry) {
        st.insertQueue.run(session, q.queueSeq, q.callId, q.name, q.argsJson, q.resultJson, q.executionTimeJson, q.isError ? 1 : 0, q.receivedAt);
      },
    };
    return tx;
  }
}

function prepare(db: Database.Database) {
  return {
    probe: db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?)"),
    setHeads: db.prepare(
      `INSERT INTO sessions (id, event_head, queue_head, committed, epoch, created_at, last_event_at, open_calls, errors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET event_head = excluded.event_head, queue_head = excluded.queue_head, committed = excluded.committed,
         epoch = excluded.epoch, created_at = excluded.created_at, last_event_at = excluded.last_event_at,
         open_calls = excluded.open_calls, errors = excluded.errors`,
    ),
    deleteHeads: db.prepare('DELETE FROM sessions WHERE id = ?'),
    deleteEvents: db.prepare('DELETE FROM events WHERE session = ?'),
    deleteQueue: db.prepare('DELETE FROM queue WHERE session = ?'),
    deleteCalls: db.prepare('DELETE FROM calls WHERE session = ?'),
    expired: db.prepare('SELECT id FROM sessions INDEXED BY sessions_by_activity WHERE last_event_at < ? ORDER BY last_event_at ASC LIMIT ?'),
    ackedSessions: db.prepare('SELECT id, committed FROM sessions WHERE id > ? AND committed > 0 ORDER BY id LIMIT ?'),
    // Acknowledged and older than the cutoff, oldest first: a prefix of the session's queue.
    trimAcked: db.prepare(
      `DELETE FROM queue WHERE session = ? AND queue_seq IN
         (SELECT queue_seq FROM queue WHERE session = ? AND queue_seq <= ? AND received_at < ? ORDER BY queue_seq LIMIT ?)`,
    ),
    countDeletion: db.prepare('INSERT INTO deletions (session, count) VALUES (?, 1) ON CONFLICT (session) DO UPDATE SET count = count + 1'),
    call: db.prepare('SELECT record FROM calls WHERE session = ? AND call_id = ?'),
    // Open calls only (started, no result), chosen by SQLite: a session's completed calls are not parsed.
    openCalls: db.prepare(
      "SELECT call_id, record FROM calls WHERE session = ? AND json_extract(record, '$.started') IS NOT NULL AND json_extract(record, '$.completed') IS NULL",
    ),
    putCall: db.prepare(
      'INSERT INTO calls (session, call_id, record) VALUES (?, ?, ?) ON CONFLICT (session, call_id) DO UPDATE SET record = excluded.record',
    ),
    insertEvent: db.prepare('INSERT INTO events (session, seq, type, frame) VALUES (?, ?, ?, ?)'),
    trimEvents: db.prepare('DELETE FROM events WHERE session = ? AND seq < ?'),
    insertQueue: db.prepare(
      `INSERT INTO queue (session, queue_seq, call_id, name, args, result, execution_time, is_error, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}
