/**
 * The reading half of the sqlite backend, on the main thread: its own connection to the file the
 * writer thread commits to. In WAL a reader never waits for the writer, and a read that starts
 * after a commit was reported sees it, so a queue read right after a 202 finds the entry.
 */
import type Database from 'better-sqlite3';
import type { SessionHeads } from './ledger.js';
import { headsReader, openForReading } from './sqlite-schema.js';
import type { EventPage, QueuePage } from './types.js';

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

export class SqliteReader {
  private readonly db: Database.Database;
  private readonly st: ReturnType<typeof prepare>;
  private readonly heads: (session: string) => SessionHeads;
  // Each read is one read transaction, so that the heads and the page agree with each other;
  // built once, as better-sqlite3's transaction() makes a new wrapper at every call.
  private readonly queueRead: (session: string, after: number | undefined, limit: number) => QueuePage;
  private readonly eventsRead: (session: string, after: number, limit: number) => EventPage;

  constructor(
    path: string,
    private readonly epoch: string,
  ) {
    this.db = openForReading(path);
    this.st = prepare(this.db);
    this.heads = headsReader(this.db);
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
    return { session, epoch: this.epoch, head: heads.eventHead, oldest, events: rows.map((r) => ({ session, seq: r.seq, type: r.type, frame: r.frame })) };
  }

  private queuePage(session: string, after: number | undefined, limit: number): QueuePage {
    const heads = this.heads(session);
    const rows = this.st.readQueue.all(session, after ?? heads.committed, limit) as QueueRow[];
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

  queueDepth(): number {
    return (this.st.queueDepth.get() as { depth: number | null }).depth ?? 0;
  }
}

function prepare(db: Database.Database) {
  return {
    readQueue: db.prepare(
      `SELECT queue_seq, call_id, name, args, result, execution_time, is_error, received_at FROM queue
       WHERE session = ? AND queue_seq > ? ORDER BY queue_seq LIMIT ?`,
    ),
    readEvents: db.prepare('SELECT seq, type, frame FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?'),
    oldestEvent: db.prepare('SELECT MIN(seq) AS oldest FROM events WHERE session = ?'),
    queueDepth: db.prepare('SELECT SUM(queue_head - committed) AS depth FROM sessions'),
  };
}
