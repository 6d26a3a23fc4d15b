/**
 * bench/cpu-per-request: server CPU per 2 KiB tool-results under the bench/ingest load, per thread
 * (main thread, sqlite writer thread, the rest), from /proc. CPU time is steadier than req/s on
 * these shared machines, and it says where the time goes.
 *
 * Usage: npm run build && npx tsx bench/cpu-per-request.ts [-- --seconds 6 --connections 50]
 * Env: BENCH_STORE (default a fresh sqlite file), BENCH_SCRIPT (default dist/server.js; e.g.
 * "--import tsx bench/bare-route.ts" for the baseline).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { driveToolResults } from './load.js';
import { numberOption } from './options.js';

const SECONDS = numberOption('seconds', 6);
const CONNECTIONS = numberOption('connections', 50);
const dir = mkdtempSync(join(tmpdir(), 'horologium-cpu-'));
const port = 18_950;
const script = (process.env.BENCH_SCRIPT ?? 'dist/server.js').split(' ');
const child = await startChild(script, { HOROLOGIUM_STORE: process.env.BENCH_STORE ?? `sqlite:${join(dir, 'b.db')}`, LOG_LEVEL: 'info' }, port);

/** CPU milliseconds of each thread of the child, by thread id. */
function threadCpu(): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
    try {
      cpu.set(tid, cpuMs(child.pid as number, tid));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return cpu;
}

try {
  const url = `http://127.0.0.1:${port}/v1/sessions/cpu/tool-results`;
  const seq = { n: 0 };
  await driveToolResults(url, seq, CONNECTIONS, 3);
  const before = threadCpu();
  const load = await driveToolResults(url, seq, CONNECTIONS, SECONDS);
  const after = threadCpu();
  const requests = load.rps * SECONDS;
  const perRequest = [...after].map(([tid, ms]) => ({ tid, us: ((ms - (before.get(tid) ?? 0)) * 1000) / requests }));
  perRequest.sort((a, b) => b.us - a.us);
  const total = perRequest.reduce((a, t) => a + t.us, 0);
  const main = perRequest.find((t) => t.tid === String(child.pid))?.us ?? 0;
  const others = perRequest.filter((t) => t.tid !== String(child.pid));
  console.log(`req/s ${load.rps.toFixed(0)} (non-2xx ${load.non2xx}); server CPU µs per request: total ${total.toFixed(1)}, main thread ${main.toFixed(1)}, busiest other thread ${(others[0]?.us ?? 0).toFixed(1)}, the rest ${(total - main - (others[0]?.us ?? 0)).toFixed(1)}`);
} finally {
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
