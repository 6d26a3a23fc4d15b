/** Starts a real listening Horologium on port 0 for a test, and closes it at teardown. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config/config.js';
import { testConfig } from './config.js';
import { freePort } from './process.js';
import { sleep } from './wait.js';

export interface Running {
  app: FastifyInstance;
  url: string;
  config: Config;
  /** POST JSON text (sent as is) or a value (JSON.stringify'd). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
}

export interface Reply {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

export function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'horologium-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function toReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

export function client(url: string) {
  return {
    async post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
      const res = await fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
      });
      return toReply(res);
    },
    async get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
      return toReply(await fetch(url + path, { headers }));
    },
  };
}

/** A server on a sqlite file in a fresh temporary directory unless `overrides.store` says otherwise. */
export async function startServer(t: Test, overrides: Partial<Config> = {}): Promise<Running> {
  const store = overrides.store ?? `sqlite:${join(tempDir(t), 'horologium.db')}`;
  const config = testConfig({ ...overrides, store });
  const app = await buildApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const url = `http://127.0.0.1:${address.port}`;
  return { app, url, config, ...client(url) };
}

export interface Restartable {
  port: number;
  url: string;
  api: ReturnType<typeof client>;
  /**
   * Stops the server and starts a new one on the same port and store: a restart, as clients see it,
   * with the port closed for `downMs` in between.
   */
  restart(downMs?: number): Promise<void>;
}

/** A server on a fixed free port and a sqlite file of its own, that a test can restart. */
export async function restartableServer(t: Test, overrides: Partial<Config> = {}): Promise<Restartable> {
  const port = await freePort();
  const config = testConfig({ store: `sqlite:${join(tempDir(t), 'restartable.db')}`, ...overrides, port });
  const start = async () => {
    const app = await buildApp(config);
    await app.listen({ port, host: '127.0.0.1' });
    return app;
  };
  let app = await start();
  t.teardown(() => app.close());
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    api: client(url),
    async restart(downMs = 0) {
      await app.close();
      if (downMs > 0) await sleep(downMs);
      app = await start();
    },
  };
}
