/**
 * bench/large-results: 1 MiB and 8 MiB tool results (issue 31, part 5): write throughput, what one
 * queue read of an 8 MiB entry costs the server, and (so that the large case is not bought with the
 * common one) a read of a full page of 1,000 entries of 2 KiB.
 *
 * Usage: npm run build && npx tsx bench/large-results.ts [-- --reads 20 --rounds 2 --baseline DIR]
 *
 * Each server (dist/server.js, a fresh SQLite file or BENCH_STORE, in a child process; with
 * --baseline also DIR/dist/server.js, another build, in alternating rounds): 20 results of 1 MiB and
 * 5 of 8 MiB posted one at a time (MB/s of result bytes); the 8 MiB entry read `--reads` times
 * (`GET …/queue?limit=1`); 1,000 results of 2 KiB posted 50 at a time, then read as one page
 * (`limit=1000`) `--reads` times. Server CPU per read from /proc; medians over the rounds. The last
 * line is the 8 MiB read's server CPU in ms (and its ratio to the baseline's).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { median, numberOption } from './options.js';

const READS = numberOption('reads', 20);
const ROUNDS = numberOption('rounds', 1);
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
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

async function throughput(tag: string, bytes: number, count: number): Promise<number> {
  const body = result(bytes);
  const started = performance.now();
  for (let k = 0; k < count; k++) await post(`big-${bytes}-${tag}`, `c${k}`, body);
  return (body.length * count) / 1e6 / ((performance.now() - started) / 1000);
}

/** Server CPU ms per read of `path`, and the reply's size; each reply checked to hold `expect`. */
async function readCost(pid: number, path: string, expect: string): Promise<{ cpu: number; mb: number; clientMs: number }> {
  const times: number[] = [];
  let bytes = 0;
  const cpu0 = cpuMs(pid);
  for (let k = 0; k < READS; k++) {
    const started = performance.now();
    const res = await fetch(`${base}${path}`);
    const body = Buffer.from(await res.arrayBuffer());
    times.push(performance.now() - started);
    bytes = body.length;
    if (res.status !== 200 || !body.includes(expect)) throw new Error(`read ${path}: ${res.status}`);
  }
  return { cpu: (cpuMs(pid) - cpu0) / READS, mb: bytes / 1e6, clientMs: median(times) };
}

interface Round {
  mb1: number;
  mb8: number;
  read8: { cpu: number; mb: number; clientMs: number };
  page: { cpu: number; mb: number; clientMs: number };
}

async function round(script: string): Promise<Round> {
  const child = await startChild([script], { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn' }, PORT);
  try {
    const pid = child.pid as number;
    // Sessions of this round's own: with BENCH_STORE=redis://… every round shares one Redis.
    const tag = randomUUID().slice(0, 8);
    const mb1 = await throughput(tag, 1024 * 1024, 20);
    const mb8 = await throughput(tag, 8 * 1024 * 1024, 5);
    await post(`read-8m-${tag}`, 'c1', result(8 * 1024 * 1024));
    const read8 = await readCost(pid, `/v1/sessions/read-8m-${tag}/queue?limit=1`, '"queue_seq":1');
    const small = result(2048);
    for (let k = 0; k < 1000; k += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => post(`page-${tag}`, `c${k + j}`, small)));
    const page = await readCost(pid, `/v1/sessions/page-${tag}/queue?limit=1000`, '"queue_seq":1000');
    return { mb1, mb8, read8, page };
  } finally {
    await stopChild(child);
  }
}

const servers = [{ name: 'this build', script: 'dist/server.js' }, ...(baseline ? [{ name: `baseline (${baseline})`, script: resolve(baseline, 'dist/server.js') }] : [])];
const results = new Map<string, Round[]>(servers.map((s) => [s.name, []]));
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 === 0 ? servers : [...servers].reverse()) results.get(s.name)?.push(await round(s.script));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const m = (name: string, pick: (r: Round) => number) => median((results.get(name) ?? []).map(pick));
console.log(`| measure (median of ${ROUNDS} rounds) | ${servers.map((s) => s.name).join(' | ')} |`);
console.log(`|---|${servers.map(() => '---|').join('')}`);
const row = (label: string, pick: (r: Round) => number, digits: number) =>
  console.log(`| ${label} | ${servers.map((s) => m(s.name, pick).toFixed(digits)).join(' | ')} |`);
row('1 MiB results, MB/s (sequential)', (r) => r.mb1, 0);
row('8 MiB results, MB/s (sequential)', (r) => r.mb8, 0);
row(`read of one 8 MiB entry (${(results.get('this build')?.[0]?.read8.mb ?? 0).toFixed(1)} MB reply), server CPU ms per read`, (r) => r.read8.cpu, 1);
row('read of one 8 MiB entry, client ms (median)', (r) => r.read8.clientMs, 1);
row(`read of a page of 1,000 entries of 2 KiB (${(results.get('this build')?.[0]?.page.mb ?? 0).toFixed(1)} MB), server CPU ms per read`, (r) => r.page.cpu, 1);
row('read of the page, client ms (median)', (r) => r.page.clientMs, 1);

const mine = m('this build', (r) => r.read8.cpu);
const theirs = baseline ? m(servers[1]?.name as string, (r) => r.read8.cpu) : undefined;
console.log(
  `\n8 MiB queue read: ${mine.toFixed(1)} ms server CPU per read` +
    (theirs ? `, ${(mine / theirs).toFixed(2)}x the baseline's ${theirs.toFixed(1)} ms` : '') +
    `; writes ${m('this build', (r) => r.mb1).toFixed(0)} MB/s (1 MiB), ${m('this build', (r) => r.mb8).toFixed(0)} MB/s (8 MiB)`,
);
