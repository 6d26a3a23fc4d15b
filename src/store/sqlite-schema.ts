/**
 * The SQLite file of the `sqlite:PATH` backend: its tables and how every connection opens it.
 * The writer (in its worker thread) creates and writes it; the main thread reads it through a
 * connection of its own, which WAL allows without blocking the writer.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { EMPTY_HEADS, incarnationEpoch, type SessionHeads } from './ledger.js';

/**
 * 16 KiB pages: a 2 KiB result and its ~2.5 KiB frame fill one 4 KiB page each, so every write
 * dirtied (and logged to the WAL) a page of its own per table. With 16 KiB, several writes of a
 * batch share a page: about 40% less SQLite CPU per write (bench/store-writes). Only new files
 * take it: the page size of an existing WAL file stays what it was.
 */
export const PAGE_SIZE = 16_384;

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
CREATE TABLE IF NOT EXISTS deletions (
  session TEXT PRIMARY KEY,
  count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
  session TEXT NOT NULL,
  call_id TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (session, call_id)
);
`;

/** Opens (creating when missing) the store's file for writing: WAL, synchronous=FULL. */
export function openForWriting(path: string): { db: Database.Database; epoch: string } {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before the writer reports it, so a 202 survives kill -9 and power loss.
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  // The epoch names this database file: its event logs are lost only if the file is (or a
  // session deleted: then incarnationEpoch adds the count of its deletions).
  db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run('epoch', randomUUID());
  const epoch = readEpoch(db);
  addSessionColumns(db, epoch);
  addCallCounts(db);
  return { db, epoch };
}

/**
 * v1.1 (sessions list, deletion): each session row carries its epoch, created_at and
 * last_event_at (ms), indexed by activity. A file from before gets the columns, its sessions the
 * file's epoch and the time of the upgrade.
 */
function addSessionColumns(db: Database.Database, epoch: string): void {
  const columns = new Set((db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).map((c) => c.name));
  if (!columns.has('epoch')) {
    const now = Date.now();
    db.transaction(() => {
      db.exec('ALTER TABLE sessions ADD COLUMN epoch TEXT NOT NULL DEFAULT \'\'');
      db.exec('ALTER TABLE sessions ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE sessions ADD COLUMN last_event_at INTEGER NOT NULL DEFAULT 0');
      db.prepare('UPDATE sessions SET epoch = ?, created_at = ?, last_event_at = ?').run(epoch, now, now);
    })();
  }
  db.exec('CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (last_event_at DESC, id)');
}

/**
 * v1.2: each session row counts its open calls and its errors, kept at write time. A file from
 * before gets the columns, filled once from what it holds: the call records started and not
 * completed, and the error entries still in the queue (acknowledged ones removed by retention are
 * not counted).
 */
function addCallCounts(db: Database.Database): void {
  const columns = new Set((db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).map((c) => c.name));
  if (columns.has('open_calls')) return;
  db.transaction(() => {
    db.exec('ALTER TABLE sessions ADD COLUMN open_calls INTEGER NOT NULL DEFAULT 0');
    db.exec('ALTER TABLE sessions ADD COLUMN errors INTEGER NOT NULL DEFAULT 0');
    db.exec(`UPDATE sessions SET
      open_calls = (SELECT COUNT(*) FROM calls WHERE calls.session = sessions.id
        AND json_extract(record, '$.started') IS NOT NULL AND json_extract(record, '$.completed') IS NULL),
      errors = (SELECT COUNT(*) FROM queue WHERE queue.session = sessions.id AND is_error = 1)`);
  })();
}

/** Opens the file the writer created, for reads only. */
export function openForReading(path: string): Database.Database {
  const db = new Database(path, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

function readEpoch(db: Database.Database): string {
  return (db.prepare('SELECT value FROM meta WHERE key = ?').get('epoch') as { value: string }).value;
}

/** A session's heads as read by both connections (EMPTY_HEADS for a session that does not exist). */
export function headsReader(db: Database.Database): (session: string) => SessionHeads {
  const statement = db.prepare(`SELECT ${HEADS_COLUMNS} FROM sessions WHERE id = ?`);
  return (session) => {
    const row = statement.get(session) as HeadsRow | undefined;
    return row ? headsOf(row) : EMPTY_HEADS;
  };
}

/** The columns of a session row that HeadsRow names, for SELECT. */
export const HEADS_COLUMNS = 'id, event_head, queue_head, committed, epoch, created_at, last_event_at, open_calls, errors';

export interface HeadsRow {
  event_head: number;
  queue_head: number;
  committed: number;
  epoch: string;
  created_at: number;
  last_event_at: number;
  open_calls: number;
  errors: number;
}

export function headsOf(row: HeadsRow): SessionHeads {
  return {
    eventHead: row.event_head,
    queueHead: row.queue_head,
    committed: row.committed,
    epoch: row.epoch,
    createdAt: row.created_at,
    lastEventAt: row.last_event_at,
    openCalls: row.open_calls,
    errors: row.errors,
  };
}

/** The epoch a session that does not exist would get at its next write. */
export function nextEpochReader(db: Database.Database, fileEpoch: string): (session: string) => string {
  const statement = db.prepare('SELECT count FROM deletions WHERE session = ?');
  return (session) => incarnationEpoch(fileEpoch, (statement.get(session) as { count: number } | undefined)?.count ?? 0);
}
