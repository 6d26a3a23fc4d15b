/**
 * bench/ingest: durable tool-results ingest against a bare Fastify route, side by side in one run.
 *
 * Usage: npm run bench:ingest [-- --seconds 10 --connections 50]
 *
 * Both servers run in child processes of this one, on loopback; autocannon drives each in turn
 * with the same body. The bare route parses the same body with JSON.parse and replies 202; the
 * Horologium route commits to a fresh SQLite file (WAL, synchronous=FULL) before replying. Then
 * 1 MiB and 8 MiB results are posted one at a time and their throughput reported in MB/s.
 * Results go to stdout as a Markdown table (copied into BENCHMARKS.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, stopChild } from './children.js';
import { driveToolResults } from './load.js';
import { numberOption } from './options.js';

const SECONDS = numberOption('seconds', 10);
const CONNECTIONS = numberOption('connections', 50);
const drive = (url: string, seq: { n: number }) => driveToolResults(url, seq, CONNECTIONS, SECONDS);

async function bigResults(url: string, bytes: number, count: number): Promise<number> {
  const payload = `{"content":"${'y'.repeat(bytes - 40)}","n":12345678901234567890}`;
  const started = performance.now();
  for (let k = 0; k < count; k++) {
    const res = await fetch(`${url}/v1/sessions/big/tool-results`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"call_id":"big-${bytes}-${k}","name":"cat","result":${payload}}`,
    });
    if (res.status !== 202) throw new Error(`big result: ${res.status} ${await res.text()}`);
  }
  return (bytes * count) / 1e6 / ((performance.now() - started) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), 'horologium-bench-'));
const barePort = 18_901;
const horoPort = 18_902;
const bare = await startChild(['--import', 'tsx', 'bench/bare-route.ts'], {}, barePort);
const horo = await startChild(['dist/server.js'], { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }, horoPort);
try {
  // Warm both up, then measure each in turn, twice, alternating to even out machine drift.
  await drive(`http://127.0.0.1:${barePort}/v1/sessions/w/tool-results`, { n: 0 });
  await drive(`http://127.0.0.1:${horoPort}/v1/sessions/w/tool-results`, { n: 0 });
  const bareRuns = [];
  const horoRuns = [];
  for (let round = 0; round < 2; round++) {
    bareRuns.push(await drive(`http://127.0.0.1:${barePort}/v1/sessions/b${round}/tool-results`, { n: 0 }));
    horoRuns.push(await drive(`http://127.0.0.1:${horoPort}/v1/sessions/h${round}/tool-results`, { n: 0 }));
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bareRps = avg(bareRuns.map((r) => r.rps));
  const horoRps = avg(horoRuns.map((r) => r.rps));
  const mb1 = await bigResults(`http://127.0.0.1:${horoPort}`, 1024 * 1024, 20);
  const mb8 = await bigResults(`http://127.0.0.1:${horoPort}`, 8 * 1024 * 1024, 5);
  const bad = [...bareRuns, ...horoRuns].reduce((a, r) => a + r.non2xx + r.errors, 0);
  console.log(`| measure | bare Fastify route | Horologium (sqlite, durable) | ratio |`);
  console.log(`|---|---|---|---|`);
  console.log(`| 2 KiB tool-results, ${CONNECTIONS} connections, req/s | ${bareRps.toFixed(0)} | ${horoRps.toFixed(0)} | ${(horoRps / bareRps).toFixed(2)}x |`);
  console.log(`| p99 latency, ms | ${avg(bareRuns.map((r) => r.p99)).toFixed(1)} | ${avg(horoRuns.map((r) => r.p99)).toFixed(1)} | |`);
  console.log(`| 1 MiB results, MB/s (sequential) | | ${mb1.toFixed(0)} | |`);
  console.log(`| 8 MiB results, MB/s (sequential) | | ${mb8.toFixed(0)} | |`);
  console.log(`\nnon-2xx replies or errors: ${bad}; ${SECONDS}s per run, 2 alternating rounds each after a warm-up, node ${process.version}`);
} finally {
  await Promise.all([stopChild(bare), stopChild(horo)]);
  rmSync(dir, { recursive: true, force: true });
}
