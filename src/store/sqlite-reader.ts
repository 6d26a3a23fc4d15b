/**
 * The reading half of the sqlite backend, on the main thread: its own connection to the file the
 * writer thread commits to. In WAL a reader never waits for the writer, and a read that starts
 * after a commit was reported sees it, so a queue read right after a 202 finds the entry.
 */
import type Database from 'better-sqlite3';
import type { CallRecord, SessionHeads } from './ledger.js';
import { decodeCursor, encodeCursor } from './session-cursor.js';
import { HEADS_COLUMNS, headsOf, headsReader, nextEpochReader, openForReading, type HeadsRow } from './sqlite-schema.js';
import { inState } from '../wire/sessions.js';
import type { EventPage, QueuePage, SessionList, SessionListQuery, SessionSummary, StoredQueueEntry } from './types.js';

interface QueueRow {
  queue_seq: number;
  call_id: string;
  name: string;
  args: string | null;
  /** The stored text's bytes (selected CAST AS BLOB: no JS string is made of it). */
  result: Buffer;
  execution_time: string;
  is_error: number;
  received_at: string;
}

export class SqliteReader {
  private readonly db: Database.Database;
  private readonly st: ReturnType<typeof prepare>;
  private readonly heads: (session: string) => SessionHeads;
  // Each read is one read transaction, so that the heads and the page agree with each other;
  // built once, as better-sqlite3's transaction() makes a new wrapper at every call.
  private readonly queueRead: (session: string, after: number | undefined, limit: number) => QueuePage;
  private readonly eventsRead: (session: string, after: number, limit: number) => EventPage;
  private readonly nextEpoch: (session: string) => string;
  private readonly summaryRead: (session: string) => SessionSummary | undefined;

  constructor(
    path: string,
    private readonly epoch: string,
  ) {
    this.db = openForReading(path);
    this.st = prepare(this.db);
    this.heads = headsReader(this.db);
    this.nextEpoch = nextEpochReader(this.db, epoch);
    this.summaryRead = this.db.transaction((session: string) => {
      const row = this.st.session.get(session) as (HeadsRow & { id: string }) | undefined;
      return row ? this.summaryOf(row) : undefined;
    });
    this.queueRead = this.db.transaction((session: string, after: number | undefined, limit: number) => this.queuePage(session, after, limit));
    this.eventsRead = this.db.transaction((session: string, after: number, limit: number) => this.eventPage(session, after, limit));
  }

  get open(): boolean {
    return this.db.open;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  readQueue(session: string, after: number | undefined, limit: number): QueuePage {
    return this.queueRead(session, after, limit);
  }

  readEvents(session: string, after: number, limit: number): EventPage {
    return this.eventsRead(session, after, limit);
  }

  private eventPage(session: string, after: number, limit: number): EventPage {
    const heads = this.heads(session);
    const oldest = (this.st.oldestEvent.get(session) as { oldest: number | null }).oldest ?? 0;
    const rows = this.st.readEvents.all(session, after, limit) as { seq: number; type: string; frame: string }[];
    return { session, epoch: heads.epoch || this.nextEpoch(session), head: heads.eventHead, oldest, events: rows.map((r) => ({ session, seq: r.seq, type: r.type, frame: r.frame })) };
  }

  private queuePage(session: string, after: number | undefined, limit: number): QueuePage {
    const heads = this.heads(session);
    const rows = this.st.readQueue.all(session, after ?? heads.committed, limit) as QueueRow[];
    return {
      session,
      committed: heads.committed,
      head: heads.queueHead,
      oldest: (this.st.oldestEntry.get(session) as { oldest: number | null }).oldest ?? 0,
      entries: rows.map(queueEntry),
    };
  }

  toolResult(session: string, callId: string): StoredQueueEntry | undefined {
    const row = this.st.callRecord.get(session, callId) as { record: string } | undefined;
    const queueSeq = row ? (JSON.parse(row.record) as CallRecord).completed?.queueSeq : undefined;
    if (!queueSeq) return undefined;
    const entry = this.st.queueEntry.get(session, queueSeq) as QueueRow | undefined;
    return entry ? queueEntry(entry) : undefined;
  }

  sessionSummary(session: string): SessionSummary | undefined {
    return this.summaryRead(session);
  }

  /**
   * One page of the sessions list, walking the activity index from the cursor: rows the token does
   * not cover are skipped, so a page reads about as many rows as it shows when the token covers
   * most of what the prefix selects.
   */
  listSessions(query: SessionListQuery): SessionList {
    let at = query.cursor === undefined ? { lastEventAt: Number.MAX_SAFE_INTEGER, session: '' } : decodeCursor(query.cursor);
    if (!at) return { sessions: [], next: null };
    const prefix = query.prefix ?? '';
    // The prefix as a range on the id: [prefix, prefix + U+FFFF) holds every id that starts with it.
    const low = prefix;
    const high = prefix === '' ? '\uffff' : `${prefix}\uffff`;
    const sessions: SessionSummary[] = [];
    const chunk = Math.max(query.limit + 1, 64);
    for (;;) {
      const rows = this.st.listAfter.all(at.lastEventAt, at.lastEventAt, at.session, low, high, chunk) as Array<HeadsRow & { id: string }>;
      for (const row of rows) {
        at = { lastEventAt: row.last_event_at, session: row.id };
        if (!query.covers(row.id)) continue;
        if (query.state !== undefined && !inState(headsOf(row), query.state)) continue;
        if (sessions.length === query.limit) {
          const last = sessions[sessions.length - 1] as SessionSummary;
          return { sessions, next: encodeCursor(last) };
        }
        sessions.push(this.summaryOf(row));
      }
      if (rows.length < chunk) return { sessions, next: null };
    }
  }

  private summaryOf(row: HeadsRow & { id: string }): SessionSummary {
    const h = headsOf(row);
    return {
      session: row.id,
      epoch: h.epoch,
      head: h.eventHead,
      oldest: (this.st.oldestEvent.get(row.id) as { oldest: number | null }).oldest ?? 0,
      queueHead: h.queueHead,
      committed: h.committed,
      openCalls: h.openCalls,
      errors: h.errors,
      createdAt: h.createdAt,
      lastEventAt: h.lastEventAt,
    };
  }

  queueDepth(): number {
    return (this.st.queueDepth.get() as { depth: number | null }).depth ?? 0;
  }
}

function queueEntry(r: QueueRow): StoredQueueEntry {
  return {
    queueSeq: r.queue_seq,
    callId: r.call_id,
    name: r.name,
    argsJson: r.args,
    result: r.result,
    executionTimeJson: r.execution_time,
    isError: r.is_error === 1,
    receivedAt: r.received_at,
  };
}

function prepare(db: Database.Database) {
  return {
    callRecord: db.prepare('SELECT record FROM calls WHERE session = ? AND call_id = ?'),
    queueEntry: db.prepare(
      'SELECT queue_seq, call_id, name, args, CAST(result AS BLOB) AS result, execution_time, is_error, received_at FROM queue WHERE session = ? AND queue_seq = ?',
    ),
    readQueue: db.prepare(
      `SELECT queue_seq, call_id, name, args, CAST(result AS BLOB) AS result, execution_time, is_error, received_at FROM queue
       WHERE session = ? AND queue_seq > ? ORDER BY queue_seq LIMIT ?`,
    ),
    readEvents: db.prepare('SELECT seq, type, frame FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?'),
    oldestEvent: db.prepare('SELECT MIN(seq) AS oldest FROM events WHERE session = ?'),
    queueDepth: db.prepare('SELECT SUM(queue_head - committed) AS depth FROM sessions'),
    oldestEntry: db.prepare('SELECT MIN(queue_seq) AS oldest FROM queue WHERE session = ?'),
    session: db.prepare(`SELECT ${HEADS_COLUMNS} FROM sessions WHERE id = ?`),
    // Keyset paging on the activity index (last_event_at DESC, id).
    listAfter: db.prepare(
      `SELECT ${HEADS_COLUMNS} FROM sessions INDEXED BY sessions_by_activity
       WHERE (last_event_at < ? OR (last_event_at = ? AND id > ?)) AND id >= ? AND id < ?
       ORDER BY last_event_at DESC, id ASC LIMIT ?`,
    ),
  };
}
