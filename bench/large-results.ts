/**
 * bench/large-results: 1 MiB and 8 MiB tool results (issue 31, part 5): write throughput, and what
 * one queue read of an 8 MiB entry costs the server.
 *
 * Usage: npm run build && npx tsx bench/large-results.ts [-- --reads 20]
 *
 * One server (dist/server.js, a fresh SQLite file, or BENCH_STORE) in a child process. 20 results of
 * 1 MiB and 5 of 8 MiB are posted one at a time (MB/s of result bytes); then the 8 MiB entry is read
 * `--reads` times (`GET …/queue?limit=1`), each read timed at the client, and the server's CPU over
 * all of them read from /proc. The last line is the 8 MiB read's server CPU in ms.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { numberOption } from './options.js';

const READS = numberOption('reads', 20);
const PORT = 18_941;
const base = `http://127.0.0.1:${PORT}`;
const dir = mkdtempSync(join(tmpdir(), 'horologium-large-'));


/** A result of about `bytes` bytes with characters that JSON escapes in it, as real file contents have. */
function result(bytes: number): string {
  const line = 'const s = "quoted";\tindented\\path\n';
  return JSON.stringify({ content: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes), n: 12345678901234567890 });
}

async function post(session: string, callId: string, body: string): Promise<void> {
  const res = await fetch(`${base}/v1/sessions/${session}/tool-results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"call_id":"${callId}","name":"cat","result":${body}}`,
  });
  if (res.status !== 202) throw new Error(`post: ${res.status} ${await res.text()}`);
}

async function throughput(bytes: number, count: number): Promise<number> {
  const body = result(bytes);
  const started = performance.now();
  for (let k = 0; k < count; k++) await post(`big-${bytes}`, `c${k}`, body);
  return (body.length * count) / 1e6 / ((performance.now() - started) / 1000);
}

const child = await startChild(['dist/server.js'], { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn' }, PORT);
try {
  const mb1 = await throughput(1024 * 1024, 20);
  const mb8 = await throughput(8 * 1024 * 1024, 5);
  await post('read-8m', 'c1', result(8 * 1024 * 1024));
  const times: number[] = [];
  const cpu0 = cpuMs(child.pid as number);
  let bytes = 0;
  for (let k = 0; k < READS; k++) {
    const started = performance.now();
    const res = await fetch(`${base}/v1/sessions/read-8m/queue?limit=1`);
    const text = await res.text();
    times.push(performance.now() - started);
    bytes = text.length;
    if (res.status !== 200 || !text.includes('"queue_seq":1')) throw new Error(`read: ${res.status}`);
  }
  const cpuPerRead = (cpuMs(child.pid as number) - cpu0) / READS;
  times.sort((a, b) => a - b);
  console.log('| measure | value |');
  console.log('|---|---|');
  console.log(`| 1 MiB results, MB/s (sequential) | ${mb1.toFixed(0)} |`);
  console.log(`| 8 MiB results, MB/s (sequential) | ${mb8.toFixed(0)} |`);
  console.log(`| read of one 8 MiB entry (${(bytes / 1e6).toFixed(1)} MB reply), client ms p50 / max | ${(times[Math.floor(times.length / 2)] as number).toFixed(1)} / ${(times[times.length - 1] as number).toFixed(1)} |`);
  console.log(`| read of one 8 MiB entry, server CPU ms per read (${READS} reads) | ${cpuPerRead.toFixed(1)} |`);
  console.log(`\n8 MiB queue read: ${cpuPerRead.toFixed(1)} ms server CPU per read; writes ${mb1.toFixed(0)} MB/s (1 MiB), ${mb8.toFixed(0)} MB/s (8 MiB)`);
} finally {
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
