/**
 * bench/redis-channels: per-session Redis channels (issue 32) against the single-channel design,
 * side by side in one run. Two instances, A and B, on one redis-server of this run's own (started
 * anew for each design and round, AOF off: what is measured is the instances' work, not the disk).
 *
 * Usage: npm run build && npx tsx bench/redis-channels.ts --baseline DIR [--events 20000] [--seconds 5] [--rounds 2]
 *   DIR: a built checkout of the design to compare with (its dist/server.js), for example the
 *   landed main before issue 32:
 *     git worktree add ../baseline e4bd395 && ln -s "$PWD/node_modules" ../baseline/node_modules
 *     (cd ../baseline && npm run build)
 *
 * 1. Idle instance: `--events` generic events (2 KiB-ish bodies, 100 sessions, 32 in flight)
 *    posted to A, with no subscriber anywhere: server CPU per event on B, which takes no request
 *    (single channel: it receives, parses and drops every event; per-session: nothing), and on A.
 * 2. Cross-instance fan-out: 100 sessions × 10 WebSocket subscribers on B, events posted to A for
 *    `--seconds`: delivered frames/s and the CPU of A and B per delivered frame.
 * The ratio printed last is per-session / single-channel for each figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { agent, eventBody, post, sleep, throughput, type Target } from './harness.js';
import { median, numberOption } from './options.js';

const EVENTS = numberOption('events', 20_000);
const SECONDS = numberOption('seconds', 5);
const ROUNDS = numberOption('rounds', 2);
const REDIS_PORT = 18_940;
const A = 18_941;
const B = 18_942;
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
if (!BASELINE) {
  process.stderr.write('usage: tsx bench/redis-channels.ts --baseline DIR (a built checkout of the design to compare with)\n');
  process.exit(2);
}

interface Design {
  name: string;
  server: string;
}
const designs: Design[] = [
  { name: 'single channel (baseline)', server: resolve(BASELINE, 'dist/server.js') },
  { name: 'per-session channels', server: resolve('dist/server.js') },
];

interface Figures {
  idleCpuPerEvent: number;
  writerCpuPerEvent: number;
  fps: number;
  cpuPerFrame: number;
  lost: number;
}

async function startRedis(dir: string): Promise<ChildProcess> {
  const redis = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let k = 0; k < 100; k++) {
    const up = await new Promise<boolean>((done) => {
      const probe = spawn('redis-cli', ['-p', String(REDIS_PORT), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      probe.stdout.on('data', (d) => (out += d));
      probe.on('exit', () => done(out.includes('PONG')));
    });
    if (up) return redis;
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

/** Posts `count` events over 100 sessions, 32 in flight (the harness's agent). */
async function postEvents(target: Target, label: string, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      await post(target, `${label}-${n % 100}`, eventBody(n));
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

async function measure(design: Design, round: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'horologium-bench-redis-'));
  const redis = await startRedis(dir);
  const env = { HOROLOGIUM_STORE: `redis://127.0.0.1:${REDIS_PORT}`, LOG_LEVEL: 'warn', HOROLOGIUM_HISTORY_SIZE: '1000' };
  const a = await startChild([design.server], env, A);
  const b = await startChild([design.server], env, B);
  try {
    const target: Target = { name: design.name, protocol: 'ws', subscribePort: B, postPort: A, pids: [a.pid as number, b.pid as number] };
    await postEvents(target, `warm${round}`, 2000);
    await sleep(500);
    const [a0, b0] = [cpuMs(a.pid as number), cpuMs(b.pid as number)];
    await postEvents(target, `idle${round}`, EVENTS);
    await sleep(500); // what B receives arrives after the replies
    const [a1, b1] = [cpuMs(a.pid as number), cpuMs(b.pid as number)];
    const fan = await throughput(target, `fan${round}`, 100, 10, SECONDS);
    return { idleCpuPerEvent: ((b1 - b0) * 1000) / EVENTS, writerCpuPerEvent: ((a1 - a0) * 1000) / EVENTS, fps: fan.fps, cpuPerFrame: fan.cpuPerFrame, lost: fan.lost };
  } finally {
    await stopChild(a);
    await stopChild(b);
    redis.kill('SIGTERM');
    await once(redis, 'exit');
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, Figures[]>(designs.map((d) => [d.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const design of round % 2 ? [...designs].reverse() : designs) {
    const figures = await measure(design, round);
    results.get(design.name)?.push(figures);
    process.stdout.write(`round ${round + 1}, ${design.name}: ${JSON.stringify(figures, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}\n`);
  }
}
agent.destroy();

const of = (name: string, key: keyof Figures) => median((results.get(name) ?? []).map((f) => f[key]));
const [base, now] = designs.map((d) => d.name) as [string, string];
const rows: Array<[string, keyof Figures, number]> = [
  ['server CPU per event on B, which has no subscriber (µs)', 'idleCpuPerEvent', 1],
  ['server CPU per event on A, which takes the posts (µs)', 'writerCpuPerEvent', 1],
  ['cross-instance fan-out, frames/s (100 sessions × 10 subscribers on B, posts to A)', 'fps', 0],
  ['server CPU (A + B) per delivered frame (µs)', 'cpuPerFrame', 2],
];
process.stdout.write(`\nmedians of ${ROUNDS} rounds, ${EVENTS} events, ${SECONDS} s fan-out\n\n| | ${base} | ${now} | ratio |\n|---|---|---|---|\n`);
for (const [label, key, digits] of rows) {
  const [x, y] = [of(base, key), of(now, key)];
  process.stdout.write(`| ${label} | ${x.toFixed(digits)} | ${y.toFixed(digits)} | ${(y / x).toFixed(2)}x |\n`);
}
