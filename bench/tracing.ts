/**
 * bench/tracing: what tracing costs the ingest path (issue 35), server CPU per durable tool result
 * with tracing off and on, side by side in one run.
 *
 * Usage: npm run build && npx tsx bench/tracing.ts [-- --bytes 2048 --connections 50 --seconds 5
 *        --rounds 5 --store sqlite|memory --baseline DIR]
 *   --baseline DIR adds a third server: another build (DIR/dist/server.js), for example the commit
 *   before tracing existed, built in a git worktree: what tracing off costs against no tracing.
 *
 * Two Horologium servers (dist/server.js, each on a fresh SQLite file) in child processes: one with
 * tracing off (no OTEL_* variable), one with OTEL_TRACES_EXPORTER=otlp exporting http/protobuf to
 * an OTLP receiver in this process (it answers 200 and counts the spans' requests and bytes; what
 * a collector does with them is not the server's cost). wrk (one thread,
 * bench/wrk-tool-results.lua) posts tool-results with a fresh call_id and a W3C traceparent on every
 * request, to each server in turn, `--rounds` times, alternating; the server's CPU (every thread,
 * and the main thread alone, where the spans are made) is read from /proc around each run and
 * divided by the requests completed. Medians; the last line is the ratio. `--store memory` takes
 * the disk (each commit's fsync, the noisiest part of a run here) out of the comparison.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, startChild, stopChild } from './children.js';
import { median, numberOption } from './options.js';
import { requireWrk, wrkToolResults } from './wrk.js';

const BYTES = numberOption('bytes', 2048);
const CONNECTIONS = numberOption('connections', 50);
const SECONDS = numberOption('seconds', 5);
const ROUNDS = numberOption('rounds', 5);
const storeAt = process.argv.indexOf('--store');
const memory = storeAt > 0 && process.argv[storeAt + 1] === 'memory';
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;

// The OTLP receiver: counts export requests and their bytes.
let exports = 0;
let exportedBytes = 0;
const receiver = createServer((req, res) => {
  req.on('data', (d: Buffer) => (exportedBytes += d.length));
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const otlp = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;


await requireWrk();
const dir = mkdtempSync(join(tmpdir(), 'horologium-tracing-'));
const store = (name: string) => (memory ? 'memory:' : `sqlite:${join(dir, `${name}.db`)}`);
const servers: Array<{ name: string; port: number; script: string; env: Record<string, string> }> = [
  { name: 'tracing off', port: 18_981, script: 'dist/server.js', env: { HOROLOGIUM_STORE: store('off'), LOG_LEVEL: 'info' } },
  {
    name: 'tracing on (OTLP http/protobuf)',
    port: 18_982,
    script: 'dist/server.js',
    env: { HOROLOGIUM_STORE: store('on'), LOG_LEVEL: 'info', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: otlp },
  },
  ...(baseline
    ? [{ name: `baseline build (${baseline})`, port: 18_983, script: resolve(baseline, 'dist/server.js'), env: { HOROLOGIUM_STORE: store('base'), LOG_LEVEL: 'info' } }]
    : []),
];
const children: ChildProcess[] = [];
try {
  for (const s of servers) children.push(await startChild([s.script], s.env, s.port));
  const cpu: number[][] = servers.map(() => []);
  const main: number[][] = servers.map(() => []);
  const rps: number[][] = servers.map(() => []);
  let errors = 0;
  let traced = 0;
  const load = { connections: CONNECTIONS, seconds: SECONDS, bytes: BYTES, traceparent: true };
  for (const s of servers) await wrkToolResults(`http://127.0.0.1:${s.port}/v1/sessions/warm/tool-results`, load);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, s] of servers.entries()) {
      const pid = children[k]?.pid as number;
      const before = cpuMs(pid);
      const mainBefore = cpuMs(pid, pid);
      const r = await wrkToolResults(`http://127.0.0.1:${s.port}/v1/sessions/r${round}/tool-results`, load);
      cpu[k]?.push(((cpuMs(pid) - before) * 1000) / r.requests);
      main[k]?.push(((cpuMs(pid, pid) - mainBefore) * 1000) / r.requests);
      rps[k]?.push(r.rps);
      errors += r.errors;
      if (k === 1) traced += r.requests;
    }
  }
  console.log(`| server (${memory ? 'memory' : 'sqlite'} store) | req/s | server CPU µs per tool result (${ROUNDS} runs) | of which main thread |`);
  console.log('|---|---|---|---|');
  for (const [k, s] of servers.entries()) {
    const runs = (cpu[k] as number[]).map((x) => x.toFixed(1)).join(' / ');
    console.log(`| ${s.name} | ${median(rps[k] as number[]).toFixed(0)} | ${median(cpu[k] as number[]).toFixed(1)} (${runs}) | ${median(main[k] as number[]).toFixed(1)} |`);
  }
  // Let the last batches leave before counting what arrived.
  await new Promise((r) => setTimeout(r, 6000));
  console.log(`${BYTES} B results, ${CONNECTIONS} connections, ${SECONDS} s runs; ${errors} non-2xx replies; the receiver got ${exports} export requests, ${(exportedBytes / 1e6).toFixed(1)} MB (${(exportedBytes / Math.max(1, traced)).toFixed(0)} bytes per traced result)`);
  const [off, on, base] = servers.map((_, k) => median(cpu[k] as number[])) as [number, number, number?];
  const [offMain, onMain, baseMain] = servers.map((_, k) => median(main[k] as number[])) as [number, number, number?];
  if (base !== undefined && baseMain !== undefined) {
    console.log(`tracing off ${(off / base).toFixed(2)}x the baseline build (${(off - base).toFixed(1)} µs; main thread ${(offMain / baseMain).toFixed(2)}x, ${(offMain - baseMain).toFixed(1)} µs)`);
  }
  console.log(`main thread: tracing on ${(onMain / offMain).toFixed(2)}x tracing off (${(onMain - offMain).toFixed(1)} µs more)`);
  console.log(`ratio: tracing on ${(on / off).toFixed(2)}x tracing off (server CPU per tool result; ${(on - off).toFixed(1)} µs more)`);
} finally {
  for (const child of children) await stopChild(child);
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
