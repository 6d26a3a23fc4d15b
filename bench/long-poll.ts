/**
 * bench/long-poll: 1,000 queue consumers long-polling 1,000 sessions (docs/protocol.md section 4,
 * `GET …/queue?wait=`): the server's CPU while they wait, and how soon each wakes after its result
 * is committed (issue 31, part 4).
 *
 * Usage: npm run build && npx tsx bench/long-poll.ts [-- --consumers 1000 --idle 10 --settle 5]
 *
 * One Horologium server (dist/server.js, a fresh SQLite file) in a child process. Every consumer
 * holds one long-poll (`wait=60`) on a session of its own over a keep-alive connection. The server's
 * CPU is read from /proc over `--idle` seconds before any consumer comes and again while they all
 * wait, nothing else happening. Then one result
 * is posted to each session in turn; for each, the time from sending the POST to the consumer's
 * reply, and from the POST's 202 to the consumer's reply (negative when the wake overtook the 202)
 * are recorded. The last line is the idle CPU and the p99s.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { numberOption } from './options.js';

const CONSUMERS = numberOption('consumers', 1000);
const IDLE_SECONDS = numberOption('idle', 10);
/** Seconds between the last poll's arrival and the idle measure (V8 collects the burst's garbage). */
const SETTLE_SECONDS = numberOption('settle', 5);
const PORT = 18_931;
const dir = mkdtempSync(join(tmpdir(), 'horologium-long-poll-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const agent = new Agent({ keepAlive: true, maxSockets: CONSUMERS + 16 });


function http(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: PORT, method, path, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.setTimeout(90_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;

const child = await startChild(
  ['dist/server.js'],
  { HOROLOGIUM_STORE: `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn' },
  PORT,
);
try {
  const pid = child.pid as number;
  // The server's own idle CPU first (timers, the writer thread), for comparison.
  await sleep(2000);
  const baseStart = cpuMs(pid);
  await sleep(IDLE_SECONDS * 1000);
  const baselineMs = cpuMs(pid) - baseStart;
  const woken: Array<number | undefined> = new Array(CONSUMERS);
  const polls = Array.from({ length: CONSUMERS }, (_, k) =>
    http('GET', `/v1/sessions/lp-${k}/queue?wait=60`).then((r) => {
      if (r.status !== 200 || !r.text.includes('"queue_seq":1')) throw new Error(`consumer ${k}: ${r.status} ${r.text.slice(0, 200)}`);
      woken[k] = performance.now();
    }),
  );
  // Every poll has reached the server and found its queue empty; let the garbage of 1,000 requests
  // be collected before measuring.
  await sleep(SETTLE_SECONDS * 1000);
  const before = cpuMs(pid);
  await sleep(IDLE_SECONDS * 1000);
  const idleMs = cpuMs(pid) - before;

  const fromPost: number[] = [];
  const from202: number[] = [];
  for (let k = 0; k < CONSUMERS; k++) {
    const sent = performance.now();
    const r = await http('POST', `/v1/sessions/lp-${k}/tool-results`, `{"call_id":"c","name":"grep","result":{"content":"woken"}}`);
    const accepted = performance.now();
    if (r.status !== 202) throw new Error(`post ${k}: ${r.status} ${r.text}`);
    // The wake may come just after the 202 reached us: give it up to 1 s.
    for (let wait = 0; woken[k] === undefined && wait < 1000; wait++) await sleep(1);
    const at = woken[k];
    if (at === undefined) throw new Error(`consumer ${k} was not woken within 1 s of its 202`);
    fromPost.push(at - sent);
    from202.push(at - accepted);
  }
  await Promise.all(polls);
  const fmt = (x: number) => x.toFixed(2);
  console.log('| measure | value |');
  console.log('|---|---|');
  console.log(`| server CPU idle, no consumer, ${IDLE_SECONDS} s | ${baselineMs} ms (${((baselineMs / (IDLE_SECONDS * 1000)) * 100).toFixed(2)}% of one core) |`);
  console.log(`| server CPU while ${CONSUMERS} long-polls wait, ${IDLE_SECONDS} s | ${idleMs} ms (${((idleMs / (IDLE_SECONDS * 1000)) * 100).toFixed(2)}% of one core) |`);
  console.log(`| POST sent → consumer woken, p50 / p99 / max, ms | ${fmt(percentile(fromPost, 0.5))} / ${fmt(percentile(fromPost, 0.99))} / ${fmt(Math.max(...fromPost))} |`);
  console.log(`| 202 received → consumer woken, p50 / p99 / max, ms | ${fmt(percentile(from202, 0.5))} / ${fmt(percentile(from202, 0.99))} / ${fmt(Math.max(...from202))} |`);
  console.log(`\nidle CPU ${idleMs} ms over ${IDLE_SECONDS} s with ${CONSUMERS} long-polls (${baselineMs} ms with none); woken p99 ${fmt(percentile(fromPost, 0.99))} ms after the POST was sent, ${fmt(percentile(from202, 0.99))} ms after its 202`);
} finally {
  agent.destroy();
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
