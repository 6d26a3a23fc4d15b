/**
 * bench/durable-write: server CPU per durable tool result, against its two baselines in one run.
 *
 * Usage: npm run build && npx tsx bench/durable-write.ts [-- --bytes 2048 --connections 50
 *        --seconds 6 --rounds 3 --baseline DIR]   (--bytes and --connections take lists: --connections 1,4,50)
 *   --baseline DIR adds a fourth server: another build (DIR/dist/server.js, say the commit before a
 *   change, built in a git worktree), so that a change is read against the floor and its before.
 *
 * Three servers in child processes, on loopback: the bare route (bench/bare-route.ts: Fastify
 * parses the body, replies 202), the bare durable route (bench/bare-durable-route.ts: the same,
 * plus the result and a ~2 KiB event row committed with better-sqlite3, WAL, synchronous=FULL, one
 * transaction per event-loop turn: the floor of a durable write) and Horologium (dist/server.js on
 * a fresh SQLite file). `wrk` (one thread, bench/wrk-tool-results.lua: a fresh call_id per request)
 * drives each in turn, alternating, `--rounds` times; the server's CPU is read from
 * /proc/<pid>/stat (every thread, the ones that ended included) before and after each run and
 * divided by the requests wrk completed. Medians are reported; the last line is the ratio.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { listOption, median, numberOption } from './options.js';
import { requireWrk, wrkToolResults } from './wrk.js';

const SIZES = listOption('bytes', [2048]);
const CONNECTIONS = listOption('connections', [50]);
const SECONDS = numberOption('seconds', 6);
const ROUNDS = numberOption('rounds', 3);
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;

interface Measured {
  rps: number;
  /** Server CPU µs per completed request: all threads, and the main thread alone. */
  cpuUs: number;
  mainUs: number;
  errors: number;
}

async function measure(pid: number, url: string, connections: number, bytes: number): Promise<Measured> {
  const cpu0 = cpuMs(pid);
  const main0 = cpuMs(pid, pid);
  const r = await wrkToolResults(url, { connections, seconds: SECONDS, bytes });
  const cpu = cpuMs(pid) - cpu0;
  const main = cpuMs(pid, pid) - main0;
  return { rps: r.rps, cpuUs: (cpu * 1000) / r.requests, mainUs: (main * 1000) / r.requests, errors: r.errors };
}


await requireWrk();
const dir = mkdtempSync(join(tmpdir(), 'horologium-durable-'));
const servers: Array<{ name: string; port: number; script: string[]; env: Record<string, string> }> = [
  { name: 'bare route', port: 18_971, script: ['--import', 'tsx', 'bench/bare-route.ts'], env: {} },
  { name: 'bare durable route', port: 18_972, script: ['--import', 'tsx', 'bench/bare-durable-route.ts'], env: {} },
  { name: 'Horologium', port: 18_973, script: ['dist/server.js'], env: { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'info' } },
  // BENCH_SECOND_LOG_LEVEL=warn: the same build again without its request lines, to read what they cost.
  ...(process.env.BENCH_SECOND_LOG_LEVEL
    ? [{ name: `Horologium, LOG_LEVEL=${process.env.BENCH_SECOND_LOG_LEVEL}`, port: 18_975, script: ['dist/server.js'], env: { HOROLOGIUM_STORE: `sqlite:${join(dir, 'second.db')}`, LOG_LEVEL: process.env.BENCH_SECOND_LOG_LEVEL } }]
    : []),
  ...(baseline
    ? [{ name: `baseline build (${baseline})`, port: 18_974, script: [resolve(baseline, 'dist/server.js')], env: { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, 'baseline.db')}`, LOG_LEVEL: 'info' } }]
    : []),
];
const children: ChildProcess[] = [];
for (const s of servers) children.push(await startChild(s.script, s.env, s.port));

let last = '';
try {
  console.log('| result bytes | connections | server | req/s | server CPU µs per request | of which main thread | vs bare route | vs bare durable route |');
  console.log('|---|---|---|---|---|---|---|---|');
  let runs = 0;
  for (const bytes of SIZES) {
    for (const connections of CONNECTIONS) {
      const results: Measured[][] = servers.map(() => []);
      // Warm every server up (JIT, SQLite file growth), then alternate so machine drift hits all alike.
      for (const s of servers) await wrkToolResults(`http://127.0.0.1:${s.port}/v1/sessions/warm${runs}/tool-results`, { connections, seconds: 2, bytes });
      for (let round = 0; round < ROUNDS; round++) {
        for (const [k, s] of servers.entries()) {
          const pid = children[k]?.pid as number;
          results[k]?.push(await measure(pid, `http://127.0.0.1:${s.port}/v1/sessions/r${runs}-${round}/tool-results`, connections, bytes));
        }
      }
      runs++;
      const cpu = results.map((rs) => median(rs.map((r) => r.cpuUs)));
      const [bare, floor] = cpu as [number, number];
      for (const [k, s] of servers.entries()) {
        const rs = results[k] as Measured[];
        const errors = rs.reduce((a, r) => a + r.errors, 0);
        console.log(
          `| ${bytes} | ${connections} | ${s.name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${(cpu[k] as number).toFixed(1)} (${rs.map((r) => r.cpuUs.toFixed(1)).join(' / ')}) | ` +
            `${median(rs.map((r) => r.mainUs)).toFixed(1)} | ${((cpu[k] as number) / bare).toFixed(2)}x | ${((cpu[k] as number) / floor).toFixed(2)}x |${errors ? ` ${errors} errors` : ''}`,
        );
      }
      const horologium = cpu[2] as number;
      const before = baseline ? `, ${(horologium / (cpu[cpu.length - 1] as number)).toFixed(2)}x the baseline build` : '';
      last = `ratio at ${bytes} B, ${connections} connections: Horologium ${(horologium / bare).toFixed(2)}x the bare route, ${(horologium / floor).toFixed(2)}x the bare durable route${before} (server CPU per request)`;
    }
  }
  console.log(last);
} finally {
  for (const child of children) await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
