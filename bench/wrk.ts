/**
 * wrk for the tool-results benchmarks (bench/durable-write.ts, bench/tracing.ts): one thread,
 * bench/wrk-tool-results.lua (a fresh call_id per request, a result of about `bytes` bytes, and a
 * W3C traceparent when asked), the requests, rate and errors it reports.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface WrkRun {
  requests: number;
  rps: number;
  /** Non-2xx replies and socket errors. */
  errors: number;
}

/** Stops the benchmark with a message when wrk is not installed. */
export async function requireWrk(): Promise<void> {
  // wrk --version exits 1 after printing its version; only a missing binary has no output.
  await run('wrk', ['--version']).catch((e: { stdout?: string }) => {
    if (!e.stdout?.includes('wrk')) throw new Error('wrk is not installed (apt-get install wrk)');
  });
}

export async function wrkToolResults(url: string, load: { connections: number; seconds: number; bytes: number; traceparent?: boolean }): Promise<WrkRun> {
  const script = ['-s', 'bench/wrk-tool-results.lua', url, '--', String(load.bytes), ...(load.traceparent ? ['traceparent'] : [])];
  const { stdout } = await run('wrk', ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, ...script], { timeout: (load.seconds + 30) * 1000 });
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return { requests, rps, errors: bad + (socketErrors ? socketErrors.slice(1).reduce((a, x) => a + Number(x), 0) : 0) };
}
