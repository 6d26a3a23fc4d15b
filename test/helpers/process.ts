/** Runs src/server.ts as a real child process, as `npm start` would, for crash and signal tests; free ports and listening test servers. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import type { Test } from 'tap';

const ROOT = new URL('../../', import.meta.url);

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

/** A log line of the server's stdout, as pino wrote it. */
export type LogLine = Record<string, any>;

/** The JSON log lines of a process's output (other output, such as warnings, is skipped). */
export function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Whether the process `pid` is the one listening on `port` (ss from iproute2); undefined where ss
 * cannot tell. A port found free may be taken by another test's server before this one binds it:
 * its /healthz would then answer for a server that is not the child.
 */
function listensOn(pid: number | undefined, port: string): boolean | undefined {
  if (pid === undefined) return undefined;
  const ss = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', timeout: 5000 });
  if (ss.status !== 0) return undefined;
  return ss.stdout.includes(`pid=${pid},`);
}

export async function spawnServer(t: Test, env: Record<string, string>): Promise<ServerProcess> {
  // A port taken between freePort and the child's bind (parallel test files): another port, a few times.
  for (let attempt = 1; ; attempt++) {
    const started = await spawnOnce(t, env);
    if (started.child.exitCode === null || env.PORT !== undefined || attempt === 3 || !started.output().includes('EADDRINUSE')) return started;
  }
}

async function spawnOnce(t: Test, env: Record<string, string>): Promise<ServerProcess> {
  const port = env.PORT ?? String(await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) break;
    try {
      if ((await fetch(`${url}/healthz`)).ok && listensOn(child.pid, port) !== false) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url, output: () => out, exited };
}

/** Runs the server with `env` and resolves when it exits (for start-up failures). */
export async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

/** Listens on a free loopback port (closed at teardown) and returns the server's base URL. */
export async function listening(t: Test, server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
