/**
 * bench/redis-cluster: writes on a Redis Cluster against a single Redis, side by side in one run
 * (issue 33). One Horologium instance each time, 2 KiB tool-results from 50 connections over 100
 * sessions (so they spread over the cluster's slots), for `--seconds`, after a 1 s warm-up:
 *
 * - single: one redis-server, AOF with `appendfsync always`;
 * - cluster: three masters and three replicas (the same AOF settings), `redis+cluster://`;
 * - cluster, WAIT 1: the same, with HOROLOGIUM_REDIS_WAIT_REPLICAS=1 (each write waits for a replica).
 *
 * Printed per design (medians of `--rounds`, the designs alternating): writes/s, server CPU per
 * write (the Horologium process, from /proc) and Redis CPU per write (every redis-server, summed),
 * and the cluster's ratios against the single Redis last.
 *
 * Usage: npm run build && npx tsx bench/redis-cluster.ts [--seconds 5] [--rounds 3] [--baseline DIR]
 *   --baseline DIR adds the single Redis on another build (DIR/dist/server.js), for example the
 *   landed main before the index left the scripts (bench/redis-channels.ts says how to build one).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, startChild, stopChild } from './children.js';
import { median, numberOption } from './options.js';

const SECONDS = numberOption('seconds', 5);
const ROUNDS = numberOption('rounds', 3);
const SERVER_PORT = 18_950;
const FIRST_REDIS_PORT = 18_960;
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''];

interface Redises {
  url: string;
  children: ChildProcess[];
  dir: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cli = (...args: string[]) => spawnSync('redis-cli', args, { encoding: 'utf8', timeout: 30_000 });

async function startRedises(nodes: number): Promise<Redises> {
  const dir = mkdtempSync(join(tmpdir(), 'horologium-bench-cluster-'));
  const children: ChildProcess[] = [];
  const ports = Array.from({ length: nodes }, (_, k) => FIRST_REDIS_PORT + k);
  for (const port of ports) {
    const own = join(dir, String(port));
    spawnSync('mkdir', ['-p', own]);
    const cluster = nodes > 1 ? ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000', '--cluster-require-full-coverage', 'no', '--cluster-port', String(port + 100)] : [];
    children.push(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', own, '--protected-mode', 'no', ...cluster, ...AOF], { stdio: 'ignore' }));
  }
  for (const port of ports) for (let k = 0; k < 100 && cli('-p', String(port), 'ping').stdout.trim() !== 'PONG'; k++) await sleep(50);
  if (nodes === 1) return { url: `redis://127.0.0.1:${ports[0]}`, children, dir };
  const created = cli('--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes');
  if (created.status !== 0) throw new Error(`cluster create: ${created.stdout}${created.stderr}`);
  for (let k = 0; k < 200; k++) {
    const ok = ports.every((p) => /cluster_state:ok/.test(cli('-p', String(p), 'cluster', 'info').stdout) && !/master_link_status:down/.test(cli('-p', String(p), 'info', 'replication').stdout));
    if (ok) break;
    await sleep(100);
  }
  return { url: `redis+cluster://${ports.slice(0, 3).map((p) => `127.0.0.1:${p}`).join(',')}`, children, dir };
}

async function stopRedises(r: Redises): Promise<void> {
  for (const child of r.children) {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }
  rmSync(r.dir, { recursive: true, force: true });
}

let seq = 0;
async function drive(seconds: number): Promise<{ rps: number; bad: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${SERVER_PORT}`,
    connections: 50,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const k = seq++;
          const body = `{"call_id":"c${k}","name":"grep","result":${JSON.stringify({ content: 'x'.repeat(1900), n: k, path: 'src/app.ts' })}}`;
          return { ...req, path: `/v1/sessions/bench-${k % 100}/tool-results`, body };
        },
      },
    ],
  });
  return { rps: result.requests.average, bad: result.non2xx + result.errors };
}

interface Design {
  name: string;
  nodes: number;
  waitReplicas: number;
  server?: string;
}
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const designs: Design[] = [
  { name: 'single Redis', nodes: 1, waitReplicas: 0 },
  ...(baseline ? [{ name: 'single Redis, baseline build', nodes: 1, waitReplicas: 0, server: resolve(baseline, 'dist/server.js') }] : []),
  { name: 'cluster (3 masters, 3 replicas)', nodes: 6, waitReplicas: 0 },
  { name: 'cluster, WAIT 1', nodes: 6, waitReplicas: 1 },
];
interface Figures {
  rps: number;
  serverCpu: number;
  redisCpu: number;
  bad: number;
}

async function measure(design: Design): Promise<Figures> {
  const redises = await startRedises(design.nodes);
  const server = await startChild([design.server ?? 'dist/server.js'], { HOROLOGIUM_STORE: redises.url, HOROLOGIUM_REDIS_WAIT_REPLICAS: String(design.waitReplicas), LOG_LEVEL: 'warn' }, SERVER_PORT);
  try {
    await drive(1);
    const redisCpu = () => redises.children.reduce((sum, c) => sum + cpuMs(c.pid as number), 0);
    const [s0, r0] = [cpuMs(server.pid as number), redisCpu()];
    const run = await drive(SECONDS);
    const [s1, r1] = [cpuMs(server.pid as number), redisCpu()];
    const writes = run.rps * SECONDS;
    return { rps: run.rps, serverCpu: ((s1 - s0) * 1000) / writes, redisCpu: ((r1 - r0) * 1000) / writes, bad: run.bad };
  } finally {
    await stopChild(server);
    await stopRedises(redises);
  }
}

const results = new Map<string, Figures[]>(designs.map((d) => [d.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const design of round % 2 ? [...designs].reverse() : designs) {
    const figures = await measure(design);
    results.get(design.name)?.push(figures);
    process.stdout.write(`round ${round + 1}, ${design.name}: ${JSON.stringify(figures, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}\n`);
  }
}
const of = (name: string, key: keyof Figures) => median((results.get(name) ?? []).map((f) => f[key]));
const base = designs[0]?.name as string;
process.stdout.write(`\nmedians of ${ROUNDS} rounds, ${SECONDS} s each, 2 KiB tool-results, 50 connections, 100 sessions\n\n`);
process.stdout.write('| | writes/s | server CPU per write (µs) | Redis CPU per write (µs, all nodes) | failed requests | writes/s vs single | server CPU vs single |\n|---|---|---|---|---|---|---|\n');
for (const { name } of designs) {
  process.stdout.write(
    `| ${name} | ${of(name, 'rps').toFixed(0)} | ${of(name, 'serverCpu').toFixed(1)} | ${of(name, 'redisCpu').toFixed(1)} | ${of(name, 'bad')} | ${(of(name, 'rps') / of(base, 'rps')).toFixed(2)}x | ${(of(name, 'serverCpu') / of(base, 'serverCpu')).toFixed(2)}x |\n`,
  );
}
