/**
 * A redis-server of the test's own: a free port, its own directory, optionally AOF with
 * `appendfsync always`, and stop / kill / restart on the same port and directory. Where no
 * redis-server binary exists the tests skip with a message, except under CI=true, where they fail.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import type { Test } from 'tap';
import { freePort } from './process.js';
import { tempDir } from './server.js';

const BINARY = process.env.REDIS_SERVER ?? 'redis-server';

export function redisAvailable(): boolean {
  return spawnSync(BINARY, ['--version']).status === 0;
}

/** Call at the top of a Redis test file: false means "skip this file" (and CI fails instead). */
export function requireRedis(t: Test): boolean {
  if (redisAvailable()) return true;
  if (process.env.CI === 'true') {
    t.fail(`${BINARY} not found: the Redis tests must run in CI`);
    return false;
  }
  t.comment(`SKIP: ${BINARY} not found; the Redis tests did not run`);
  return false;
}

/** Sends one command to the redis-server on `port` and returns the raw reply (its first chunk). */
export function redisCommand(port: number, ...cmd: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1');
    let out = '';
    socket.setTimeout(5000, () => socket.destroy(new Error(`redis on ${port}: no reply to ${cmd[0]} in 5 s`)));
    socket.on('data', (d) => {
      out += d.toString();
      socket.end();
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.write(`*${cmd.length}\r\n${cmd.map((c) => `$${Buffer.byteLength(c)}\r\n${c}\r\n`).join('')}`);
  });
}

export interface RedisProcess {
  port: number;
  url: string;
  dir: string;
  start(): Promise<void>;
  /** SIGKILL: no shutdown save, as a crash. */
  kill(): Promise<void>;
  /** Sends one command and returns the raw reply (for FLUSHALL, CLIENT KILL, …). */
  command(...args: string[]): Promise<string>;
}

export async function startRedis(t: Test, options: { aof?: boolean } = {}): Promise<RedisProcess> {
  const port = await freePort();
  const dir = tempDir(t);
  let child: ChildProcess | undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--protected-mode', 'no', '--loglevel', 'warning'];
  if (options.aof) args.push('--appendonly', 'yes', '--appendfsync', 'always');
  const command = (...cmd: string[]) => redisCommand(port, ...cmd);
  const proc: RedisProcess = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    async start() {
      child = spawn(BINARY, args, { stdio: 'ignore' });
      for (let k = 0; k < 200; k++) {
        try {
          if ((await command('PING')).startsWith('+PONG')) return;
        } catch {
          // not up yet
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('redis-server did not start');
    },
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
    command,
  };
  await proc.start();
  t.teardown(() => proc.kill());
  return proc;
}

/** The pub/sub messages a server received from Redis, by channel kind (its horologium_redis_messages_received_total). */
export async function messagesReceived(srv: { get(path: string): Promise<{ text: string }> }): Promise<{ session: number; sessions: number }> {
  const text = (await srv.get('/metrics')).text;
  const count = (channel: string) => Number(new RegExp(`^horologium_redis_messages_received_total\\{channel="${channel}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { session: count('session'), sessions: count('sessions') };
}
