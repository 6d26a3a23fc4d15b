/**
 * bench/sessions-list: the first page of GET /v1/sessions over 100,000 sessions (docs/protocol.md
 * section 9), on sqlite (the activity index) and on Redis (the sorted set), side by side with the
 * baseline a store without an index would need: read every session and sort by activity.
 *
 * Usage: npx tsx bench/sessions-list.ts [-- --sessions 100000 --reads 200]
 * Redis runs on a redis-server this script starts on a free port (skipped if there is no binary).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { RedisStore } from '../src/store/redis.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { SessionListQuery, Store } from '../src/store/types.js';
import { numberOption } from './options.js';

const SESSIONS = numberOption('sessions', 100_000);
const READS = numberOption('reads', 200);
const dir = mkdtempSync(join(tmpdir(), 'horologium-list-'));
const all: SessionListQuery['covers'] = () => true;

async function populate(store: Store): Promise<number> {
  const started = performance.now();
  for (let k = 0; k < SESSIONS; k += 500) {
    await Promise.all(Array.from({ length: Math.min(500, SESSIONS - k) }, (_, j) => store.appendEvent(`team-${(k + j) % 100}:s${k + j}`, 'note', '{}')));
  }
  return (performance.now() - started) / 1000;
}

/** Median ms of `READS` runs of `read`. */
async function timed(read: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let k = 0; k < READS; k++) {
    const t0 = performance.now();
    await read();
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)] as number;
}

async function measure(name: string, store: Store, fullScan: () => Promise<unknown>): Promise<string[]> {
  const fill = await populate(store);
  const first = await timed(() => store.listSessions({ limit: 50, covers: all }));
  let cursor = (await store.listSessions({ limit: 50, covers: all })).next as string;
  for (let k = 0; k < 99; k++) cursor = (await store.listSessions({ limit: 50, cursor, covers: all })).next as string;
  const deep = await timed(() => store.listSessions({ limit: 50, cursor, covers: all }));
  const prefixed = await timed(() => store.listSessions({ limit: 50, prefix: 'team-7:', covers: all }));
  // A token that covers 10% of the sessions (team-1*), listing without a prefix: rows it cannot see are skipped.
  const narrow = await timed(() => store.listSessions({ limit: 50, covers: (s) => s.startsWith('team-1') }));
  const scan = await timed(fullScan);
  const f = (x: number) => x.toFixed(2);
  return [
    `| ${name}: first page (50) | ${f(first)} | ${f(scan)} | ${(first / scan).toFixed(3)}x |`,
    `| ${name}: page 101, by cursor | ${f(deep)} | ${f(scan)} | ${(deep / scan).toFixed(3)}x |`,
    `| ${name}: first page, prefix team-7: (1% of sessions) | ${f(prefixed)} | ${f(scan)} | ${(prefixed / scan).toFixed(3)}x |`,
    `| ${name}: first page, a token covering 10% | ${f(narrow)} | ${f(scan)} | ${(narrow / scan).toFixed(3)}x |`,
    `| ${name}: filling ${SESSIONS} sessions took ${fill.toFixed(1)} s | | | |`,
  ];
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const rows = ['| measure (median ms) | indexed list | full scan and sort (baseline) | ratio |', '|---|---|---|---|'];
try {
  const path = join(dir, 'list.db');
  const sqlite = new SqliteStore(path, { historySize: 1000 });
  await sqlite.open();
  const db = new Database(path, { readonly: true });
  const scanAll = db.prepare('SELECT id, event_head, queue_head, committed, epoch, created_at, last_event_at FROM sessions');
  rows.push(
    ...(await measure('sqlite', sqlite, async () =>
      (scanAll.all() as Array<{ last_event_at: number }>).sort((a, b) => b.last_event_at - a.last_event_at).slice(0, 50),
    )),
  );
  db.close();
  await sqlite.close();

  if (spawnSync('redis-server', ['--version']).status === 0) {
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    try {
      const url = `redis://127.0.0.1:${port}`;
      const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
      probe.on('error', () => undefined); // refused until redis-server listens
      for (let k = 0; k < 100; k++) if (await probe.connect().then(() => true, () => false)) break;
      const redis = new RedisStore(url, { historySize: 1000 });
      await redis.open();
      rows.push(
        ...(await measure('redis', redis, async () => {
          // The baseline: every session's heads, then sort by activity.
          const ids = await probe.zrange('horologium:sessions', 0, -1);
          const pipeline = probe.pipeline();
          for (const id of ids) pipeline.hget(`horologium:{${id}}:heads`, 'last_event_at');
          const times = (await pipeline.exec()) ?? [];
          return ids.map((id, k) => [id, Number(times[k]?.[1])] as const).sort((a, b) => b[1] - a[1]).slice(0, 50);
        })),
      );
      await redis.close();
      probe.disconnect();
    } finally {
      server.kill('SIGKILL');
    }
  } else {
    rows.push('| redis: skipped, no redis-server binary | | | |');
  }
  console.log(rows.join('\n'));
  console.log(`\n${SESSIONS} sessions, ${READS} reads per figure, node ${process.version}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
