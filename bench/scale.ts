/**
 * bench/scale: two Horologium instances on Redis against one instance on SQLite, with the same
 * harness in one run.
 *
 * Usage: npm run build && npm run bench:scale [-- --seconds 5]
 *
 * - Delivered frames/s with 100 and 1,000 subscribers on one session. Single: subscribers and
 *   producer on the SQLite instance. Cross-instance: the producer posts to instance A, the
 *   subscribers are on instance B, so every frame crosses Redis pub/sub.
 * - Ingest (autocannon, 2 KiB tool-results, 50 connections): the SQLite instance, one Redis
 *   instance, and both Redis instances at once (25 connections each, summed).
 * Redis runs as a child of this process on its own port and directory, with AOF and
 * `appendfsync always`, so both sides acknowledge only what is on disk.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, stopChild } from './children.js';
import { agent, sleep, throughput, type Target } from './harness.js';
import { driveToolResults } from './load.js';
import { numberOption } from './options.js';

const SECONDS = numberOption('seconds', 5);
const REDIS_PORT = 18_930;
const SINGLE = 18_921;
const A = 18_922;
const B = 18_923;

const dir = mkdtempSync(join(tmpdir(), 'horologium-scale-'));
const redis = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
await sleep(500);
const env = { LOG_LEVEL: 'warn', HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: '100000' };
const children = [
  await startChild(['dist/server.js'], { ...env, HOROLOGIUM_STORE: `sqlite:${join(dir, 'single.db')}` }, SINGLE),
  await startChild(['dist/server.js'], { ...env, HOROLOGIUM_STORE: `redis://127.0.0.1:${REDIS_PORT}` }, A),
  await startChild(['dist/server.js'], { ...env, HOROLOGIUM_STORE: `redis://127.0.0.1:${REDIS_PORT}` }, B),
];
const single: Target = { name: 'sqlite, one instance', protocol: 'ws', subscribePort: SINGLE, postPort: SINGLE };
const cross: Target = { name: 'redis, post to A, subscribe on B', protocol: 'ws', subscribePort: B, postPort: A };
const fmt = (x: number) => x.toFixed(0);
try {
  const rows = ['| measure | one instance, SQLite | two instances, Redis | ratio |', '|---|---|---|---|'];
  for (const [k, per] of [100, 1000].entries()) {
    const s = await throughput(single, `s${k}`, 1, per, SECONDS);
    const c = await throughput(cross, `c${k}`, 1, per, SECONDS);
    if (s.lost || c.lost) throw new Error(`frames not delivered: single ${s.lost}, cross ${c.lost}`);
    rows.push(`| delivered frames/s, ${per} subscribers on one session (cross-instance on Redis) | ${fmt(s.fps)} | ${fmt(c.fps)} | ${(c.fps / s.fps).toFixed(2)}x |`);
  }
  const url = (port: number, session: string) => `http://127.0.0.1:${port}/v1/sessions/${session}/tool-results`;
  const sqliteIngest = await driveToolResults(url(SINGLE, 'ingest'), { n: 0 }, 50, SECONDS);
  const redisOne = await driveToolResults(url(A, 'ingest-one'), { n: 0 }, 50, SECONDS);
  const [onA, onB] = await Promise.all([
    driveToolResults(url(A, 'ingest-a'), { n: 0 }, 25, SECONDS),
    driveToolResults(url(B, 'ingest-b'), { n: 0 }, 25, SECONDS),
  ]);
  const bad = [sqliteIngest, redisOne, onA, onB].reduce((n, r) => n + r.non2xx + r.errors, 0);
  rows.push(`| ingest req/s, 2 KiB tool-results, 50 connections, one instance | ${fmt(sqliteIngest.rps)} | ${fmt(redisOne.rps)} | ${(redisOne.rps / sqliteIngest.rps).toFixed(2)}x |`);
  rows.push(`| ingest req/s, the same load split over both Redis instances | | ${fmt(onA.rps + onB.rps)} | ${((onA.rps + onB.rps) / sqliteIngest.rps).toFixed(2)}x |`);
  rows.push(`| ingest p99 latency, ms, one instance | ${sqliteIngest.p99} | ${redisOne.p99} | |`);
  console.log(rows.join('\n'));
  console.log(`\nnon-2xx replies or errors: ${bad}; ${SECONDS}s per phase, node ${process.version}`);
} finally {
  agent.destroy();
  await Promise.all(children.map(stopChild));
  redis.kill('SIGTERM');
  await once(redis, 'exit');
  rmSync(dir, { recursive: true, force: true });
}
