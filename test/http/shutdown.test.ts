/**
 * SIGTERM under load, on the real process: in-flight requests finish, later ones get the envelope
 * (503 SHUTTING_DOWN with Retry-After), every connection is closed once its reply is sent, stream
 * clients get 1001, the store is closed (the sqlite WAL is checkpointed away) and the process exits
 * 0 well within 10 s; every write acknowledged with 202 is there after a restart. And /readyz says
 * 503 while a full disk makes every commit fail, and 200 again once there is room.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Agent, request } from 'undici';
import { logLines, spawnServer } from '../helpers/process.js';
import { client, tempDir } from '../helpers/server.js';
import { connect } from '../helpers/ws-client.js';
import { sleep } from '../helpers/wait.js';

t.test('SIGTERM under load: replies finish, connections close, 1001, the store closes, exit 0', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'horologium.db');
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: `sqlite:${db}` });
  const stream = await connect(proc, '?session=load-0');
  await stream.next((f) => f.method === 'subscribed');
  const sse = await fetch(`${proc.url}/v1/sessions/load-1/sse`);
  const sseDone = sse.text();

  // Keep-alive connections, each posting 2 KiB results back to back.
  const agent = new Agent({ connections: 16, pipelining: 1 });
  t.teardown(() => agent.destroy());
  const acknowledged: string[] = [];
  const refusals: Array<{ status: number; body: string; retryAfter: string | undefined; connection: string | undefined }> = [];
  const networkErrors: string[] = [];
  let stop = false;
  const worker = async (w: number) => {
    for (let k = 0; !stop; k++) {
      const callId = `w${w}-${k}`;
      try {
        const r = await request(`${proc.url}/v1/sessions/load-${w % 4}/tool-results`, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ call_id: callId, name: 'read_file', result: { content: 'x'.repeat(2048) } }),
        });
        const body = await r.body.text();
        if (r.statusCode === 202) acknowledged.push(callId);
        else refusals.push({ status: r.statusCode, body, retryAfter: r.headers['retry-after'] as string | undefined, connection: r.headers.connection as string | undefined });
      } catch (err) {
        // Once the server has stopped listening, a new connection is refused: the load ends.
        networkErrors.push((err as NodeJS.ErrnoException).code ?? String(err));
        return;
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, w) => worker(w));
  while (acknowledged.length < 300) await sleep(20);

  const signalled = Date.now();
  proc.child.kill('SIGTERM');
  const exit = await proc.exited;
  const tookMs = Date.now() - signalled;
  stop = true;
  await Promise.all(workers);

  t.same(exit, { code: 0, signal: null }, 'exit 0');
  t.ok(tookMs < 10_000, `exited within 10 s (${tookMs} ms)`);
  t.equal((await stream.closed).code, 1001, 'the stream client was sent 1001');
  await sseDone.catch(() => undefined);
  for (const r of refusals) {
    t.same(
      { status: r.status, code: JSON.parse(r.body).error?.code, retryAfter: r.retryAfter, connection: r.connection },
      { status: 503, code: 'SHUTTING_DOWN', retryAfter: '1', connection: 'close' },
      'a request during shutdown gets the envelope, Retry-After, and Connection: close',
    );
  }
  t.ok(
    networkErrors.every((c) => ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(c)),
    `only connection-level refusals once the server stopped (${[...new Set(networkErrors)].join(', ') || 'none'})`,
  );
  const lines = logLines(proc.output());
  t.notOk(
    lines.some((l) => l.msg === 'stopping after an error' || l.level >= 50),
    'nothing logged as an error on the way out',
  );
  t.ok(lines.some((l) => l.msg === 'stream closed' && l.code === 1001), 'the stream close is logged');
  // better-sqlite3's close checkpoints the WAL into the database and removes it: the store was closed.
  t.notOk(existsSync(`${db}-wal`) && statSync(`${db}-wal`).size > 0, 'the sqlite store was closed (no WAL left)');

  // Every 202 is in the queue after a restart.
  const again = await spawnServer(t, { HOROLOGIUM_STORE: `sqlite:${db}` });
  const api = client(again.url);
  const stored = new Set<string>();
  for (let s = 0; s < 4; s++) {
    for (let after = 0; ; ) {
      const page = (await api.get(`/v1/sessions/load-${s}/queue?after=${after}&limit=1000`)).json;
      for (const e of page.entries) stored.add(e.call_id);
      if (page.entries.length < 1000) break;
      after = page.entries.at(-1).queue_seq;
    }
  }
  t.same(acknowledged.filter((id) => !stored.has(id)), [], `every one of the ${acknowledged.length} acknowledged results was stored`);
});

/** A small tmpfs of this test's own, so that the disk can really be filled (needs root: CI runs as root). */
function smallDisk(t: Test, megabytes: number): string | undefined {
  const dir = join(tempDir(t), 'disk');
  mkdirSync(dir);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir]);
  if (mounted.status !== 0) return undefined;
  t.teardown(() => spawnSync('umount', ['-l', dir]));
  return dir;
}

t.test('/readyz is 503 while a full disk fails every commit, and ready again once there is room', async (t) => {
  const disk = smallDisk(t, 4);
  if (!disk) {
    if (process.env.CI === 'true') t.fail('cannot mount a tmpfs: this test needs root (as CI has)');
    else t.comment('skipped: mounting a tmpfs needs root');
    return;
  }
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: `sqlite:${join(disk, 'h.db')}` });
  const api = client(proc.url);
  t.equal((await api.post('/v1/sessions/full/events', { type: 'a', data: {} })).status, 202);
  t.equal((await api.get('/readyz')).status, 200);

  // Fill what is left of the disk.
  const filler = join(disk, 'filler');
  try {
    writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
  } catch {
    // ENOSPC: the disk is full, as intended
  }
  const big = { call_id: 'big-1', name: 'read_file', result: { content: 'x'.repeat(256 * 1024) } };
  const w = await api.post('/v1/sessions/full/tool-results', big);
  t.same([w.status, w.json.error?.code], [503, 'STORE_UNAVAILABLE'], 'a write on a full disk is a 503');
  const notReady = await api.get('/readyz');
  t.same([notReady.status, notReady.json.status, notReady.headers.get('retry-after')], [503, 'unavailable', '1'], '/readyz says so');
  t.equal((await api.get('/readyz')).status, 503, 'and keeps saying so while the disk is full');

  rmSync(filler);
  t.equal((await api.get('/readyz')).status, 200, 'room again: ready again');
  t.equal((await api.post('/v1/sessions/full/tool-results', big)).status, 202, 'and the retried write succeeds');
  t.same(
    (await api.get('/v1/sessions/full/queue')).json.entries.map((e: { call_id: string }) => e.call_id),
    ['big-1'],
    'stored once: the failed attempt left nothing behind',
  );
});
