/**
 * When Redis forgets (issue 15, parts 1 to 3): a flushed database, a lost key, a restore from an
 * older snapshot and a pub/sub outage longer than the history. Two instances on a redis-server of
 * the test's own; the subscriber sits on the instance that does not take the posts, and is always
 * told (a fresh `subscribed` with `recovered: false`, docs/protocol.md section 5) before it gets
 * every event of what the log now holds. Exact seqs and frames.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { HorologiumClient, type SubscribedInfo } from '../../src/client/index.js';
import { logLines, spawnServer } from '../helpers/process.js';
import { requireRedis, startRedis } from '../helpers/redis.js';
import { startServer, type Running } from '../helpers/server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { connect, type Client } from '../helpers/ws-client.js';
import { sleep, until } from '../helpers/wait.js';

const post = async (srv: Running, session: string, k: number): Promise<number> => {
  const r = await srv.post(`/v1/sessions/${session}/events`, { type: 'note', data: { k } });
  if (r.status !== 202) throw new Error(`post ${k}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.event_seq as number;
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

/** The frames of one session as short facts: `subscribed` results, and status frames as [seq, k]. */
const story = (c: Client, session: string) =>
  c.frames
    .filter((f) => f.result?.session === session)
    .map((f) => (f.method === 'status' ? [f.result.seq, f.result.data.k] : { [f.method]: f.result }));
const statusCount = (c: Client, session: string) => c.frames.filter((f) => f.method === 'status' && f.result.session === session).length;

interface SseRecord {
  id?: string;
  event?: string;
  data?: any;
}

/** Follows an SSE response for the whole test, keeping its records. */
function followSse(t: Test, url: string): { records: () => SseRecord[] } {
  const abort = new AbortController();
  let text = '';
  void (async () => {
    const res = await fetch(url, { signal: abort.signal });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
  })().catch(() => undefined);
  t.teardown(() => abort.abort());
  return {
    records: () =>
      text
        .split('\n\n')
        .filter((r) => r !== '' && !r.startsWith(':'))
        .map((r) => {
          const record: SseRecord = {};
          for (const line of r.split('\n')) {
            const at = line.indexOf(': ');
            const [field, value] = [line.slice(0, at), line.slice(at + 2)];
            if (field === 'id') record.id = value;
            if (field === 'event') record.event = value;
            if (field === 'data') record.data = JSON.parse(value);
          }
          return record;
        }),
  };
}

if (requireRedis(t)) {
  t.test('FLUSHALL with subscribers on the other instance: told of the new epoch, then every event of it (WebSocket, SSE, AG-UI)', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    for (let k = 1; k <= 3; k++) await post(a, 'f1', k);
    const before = (await b.get('/v1/sessions/f1/events')).json;
    const ws = await connect(b, '?session=f1&since=0');
    t.teardown(() => ws.ws.close());
    const sse = followSse(t, `${b.url}/v1/sessions/f1/sse?since=0`);
    const agUi = followSse(t, `${b.url}/v1/sessions/f1/ag-ui?since=0`);
    const seen: Array<[string, number, number]> = [];
    const subscribedInfo: SubscribedInfo[] = [];
    const sdk = new HorologiumClient({
      url: `${b.url.replace('http', 'ws')}/v1/stream`,
      WebSocket,
      onEvent: (e) => seen.push([e.type, e.seq, (e.data as { k: number }).k]),
      onSubscribed: (info) => subscribedInfo.push(info),
    });
    t.teardown(() => sdk.close());
    sdk.subscribe('f1', 0);
    const sseStatus = () => sse.records().filter((r) => r.event === 'status');
    // Every stream has the first incarnation before the FLUSHALL (the AG-UI stream too: its first
    // request loads AG-UI's modules, and a late one would subscribe to the new incarnation only).
    const agUiFirst = () => agUi.records().filter((r) => r.id?.startsWith(`${before.epoch}:`)).length;
    await until(() => statusCount(ws, 'f1') === 3 && sseStatus().length === 3 && seen.length === 3 && agUiFirst() === 3, 'every stream with the first incarnation');

    t.match(await redis.command('FLUSHALL'), /^\+OK/);
    for (let k = 1; k <= 7; k++) t.equal(await post(a, 'f1', 100 + k), k, `the new incarnation numbers from 1 (${k})`);
    const after = (await b.get('/v1/sessions/f1/events')).json;
    t.not(after.epoch, before.epoch, 'a new epoch');
    await until(() => statusCount(ws, 'f1') === 10 && sseStatus().length === 10 && seen.length === 10, 'every event of both incarnations');
    await sleep(200);

    const told = { subscribed: { session: 'f1', epoch: after.epoch, oldest: 1, recovered: false } };
    const frames = story(ws, 'f1');
    t.match(frames[0], { subscribed: { session: 'f1', epoch: before.epoch, head: 3, oldest: 1, recovered: true } });
    t.same(frames.slice(1, 4), [[1, 1], [2, 2], [3, 3]]);
    t.match(frames[4], told, 'told first: a fresh subscribed with the new epoch, recovered false');
    t.same(frames.slice(5), range(1, 7).map((k) => [k, 100 + k]), 'then seqs 1..7 of the new incarnation, none swallowed');
    t.equal(frames.length, 12);

    t.same(seen.map(([, seq, k]) => [seq, k]), [[1, 1], [2, 2], [3, 3], ...range(1, 7).map((k) => [k, 100 + k])], 'the client SDK hands over every event');
    t.same(subscribedInfo.map((i) => [i.epoch, i.recovered]), [[before.epoch, true], [after.epoch, false]], 'and both subscribed');

    const records = sse.records();
    t.same(records.filter((r) => r.event === 'subscribed').map((r) => [r.data.epoch, r.data.recovered]), [[before.epoch, true], [after.epoch, false]], 'SSE: two subscribed events');
    t.same(sseStatus().map((r) => r.id), [...range(1, 3).map((k) => `${before.epoch}:${k}`), ...range(1, 7).map((k) => `${after.epoch}:${k}`)], 'SSE ids name the epoch of each event');
    t.same(records.findIndex((r) => r.event === 'subscribed' && r.data.epoch === after.epoch), 4, 'the SSE subscribed comes before the new events');

    await until(() => agUi.records().filter((r) => r.id?.startsWith(`${after.epoch}:`)).length === 7, 'AG-UI: every event of the new incarnation');
    const custom = agUi.records().filter((r) => r.data?.type === 'CUSTOM' && r.data.name === 'horologium.subscribed');
    t.equal(custom.length, 1, 'AG-UI: one CUSTOM horologium.subscribed');
    t.match(custom[0]?.data.value, { epoch: after.epoch, recovered: false });
  });

  t.test("one lost key (the events, or the heads): a new incarnation, oldest and head describe what is kept, the subscriber is told", async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    for (const [session, key, trigger] of [
      ['k1', 'events', 'read'],
      ['k2', 'events', 'write'],
      ['k3', 'heads', 'write'],
    ] as const) {
      for (let k = 1; k <= 6; k++) await post(a, session, k);
      const before = (await a.get(`/v1/sessions/${session}/events`)).json;
      const ws = await connect(b, `?session=${session}&since=0`);
      t.teardown(() => ws.ws.close());
      await until(() => statusCount(ws, session) === 6);

      t.match(await redis.command('DEL', `horologium:{${session}}:${key}`), /^:1/, `${session}: ${key} deleted`);
      if (trigger === 'read') {
        const read = (await a.get(`/v1/sessions/${session}/events`)).json;
        t.not(read.epoch, before.epoch, `${session}: a read after the loss sees a new epoch`);
        t.same([read.head, read.oldest, read.events], [0, 0, []], `${session}: head and oldest say nothing is kept`);
        t.match((await a.get(`/v1/sessions/${session}`)).json, { epoch: read.epoch, head: 0, oldest: 0 }, `${session}: the summary agrees`);
        await ws.next((f) => f.method === 'subscribed' && f.result.epoch === read.epoch);
      }
      t.equal(await post(a, session, 101), 1, `${session}: the next write is seq 1`);
      t.equal(await post(a, session, 102), 2);
      const after = (await a.get(`/v1/sessions/${session}/events`)).json;
      t.not(after.epoch, before.epoch, `${session}: a new epoch`);
      t.same([after.head, after.oldest, after.events.map((e: any) => e.result.seq)], [2, 1, [1, 2]]);
      await until(() => statusCount(ws, session) === 8, `${session}: both new events`);
      await sleep(100);
      const frames = story(ws, session);
      t.match(frames[7], { subscribed: { epoch: after.epoch, recovered: false } }, `${session}: told of the new epoch`);
      t.same(frames.slice(8), [[1, 101], [2, 102]], `${session}: then every event of it`);
      t.equal(frames.length, 10);

      const resume = await connect(a, `?session=${session}&since=6&epoch=${before.epoch}`);
      t.teardown(() => resume.ws.close());
      t.match(await resume.next((f) => f.method === 'subscribed'), { result: { epoch: after.epoch, head: 2, oldest: 1, recovered: false } }, `${session}: a resume with the old epoch is not recovered`);
    }
  });

  t.test('a lost queue or calls key, or heads lost beside a queue: a new incarnation of the log, told; the queue keeps what survives and never reuses a queue_seq', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const call = async (session: string, id: string) => {
      const started = await a.post(`/v1/sessions/${session}/tool-calls`, { call_id: id, name: 'grep', args: { q: id } });
      const done = await a.post(`/v1/sessions/${session}/tool-results`, { call_id: id, name: 'grep', result: { id } });
      if (started.status !== 202 || done.status !== 202) throw new Error(`${id}: ${started.status} ${done.status}`);
      return [started.json.event_seq, done.json.event_seq, done.json.queue_seq];
    };
    const expected = {
      // the queue lost: the entries are gone, its numbering goes on, the cursor stays
      queue: { committed: 1, head: 4, oldest: 4, seqs: [4] },
      // the call records lost: the queue is whole
      calls: { committed: 1, head: 4, oldest: 1, seqs: [1, 2, 3, 4] },
      // the heads lost: the queue's numbering goes on after its last entry, and the cursor goes
      // back to before its first (delivered again rather than lost)
      heads: { committed: 0, head: 4, oldest: 1, seqs: [1, 2, 3, 4] },
    };
    for (const key of ['queue', 'calls', 'heads'] as const) {
      const session = `q-${key}`;
      for (let k = 1; k <= 3; k++) t.same(await call(session, `c${k}`), [2 * k - 1, 2 * k, k]);
      t.equal((await a.post(`/v1/sessions/${session}/queue/ack`, { through: 1 })).status, 200);
      const before = (await a.get(`/v1/sessions/${session}/events`)).json;
      const ws = await connect(b, `?session=${session}&since=0`);
      t.teardown(() => ws.ws.close());
      await until(() => statusCount(ws, session) === 6);

      t.match(await redis.command('DEL', `horologium:{${session}}:${key}`), /^:1/, `${key} deleted`);
      t.same(await call(session, 'c4'), [1, 2, 4], `${key}: the log starts again at seq 1; queue_seq 4 is new`);
      const after = (await a.get(`/v1/sessions/${session}/events`)).json;
      t.not(after.epoch, before.epoch, `${key}: a new epoch`);
      await until(() => statusCount(ws, session) === 8, `${key}: both new events`);
      await sleep(100);
      const frames = ws.frames.filter((f) => f.result?.session === session);
      t.match(frames[7], { method: 'subscribed', result: { epoch: after.epoch, recovered: false } }, `${key}: told of the new epoch`);
      t.same(frames.slice(8).map((f) => [f.method, f.result.seq, f.result.type]), [['status', 1, 'tool_starting'], ['status', 2, 'tool_completed']], `${key}: then every event of it`);
      t.equal(frames.length, 10);

      const queue = (await b.get(`/v1/sessions/${session}/queue?after=0`)).json;
      const want = expected[key];
      t.same([queue.committed, queue.head, queue.oldest, queue.entries.map((e: any) => e.queue_seq)], [want.committed, want.head, want.oldest, want.seqs], `${key}: the queue as it is`);
      t.same((await b.get(`/v1/sessions/${session}/queue?after=0`)).json, queue, `${key}: read again, the same (the repair is done once)`);
    }
  });

  t.test('Redis restored from an older snapshot: a subscriber past the head is told, and gets the log as it now is', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    for (let k = 1; k <= 3; k++) await post(a, 'r1', k);
    t.match(await redis.command('SAVE'), /^\+OK/);
    copyFileSync(join(redis.dir, 'dump.rdb'), join(redis.dir, 'older.rdb'));
    const epoch = (await a.get('/v1/sessions/r1/events')).json.epoch;
    const ws = await connect(b, '?session=r1&since=0');
    t.teardown(() => ws.ws.close());
    for (let k = 4; k <= 6; k++) await post(a, 'r1', k);
    await until(() => statusCount(ws, 'r1') === 6);

    await redis.kill();
    copyFileSync(join(redis.dir, 'older.rdb'), join(redis.dir, 'dump.rdb'));
    await redis.start();
    await ws.next((f) => f.method === 'subscribed' && f.result.recovered === false, 15_000);
    let seq = 0;
    for (let k = 0; k < 100 && seq === 0; k++) seq = await post(a, 'r1', 104).catch(() => sleep(100).then(() => 0));
    t.equal(seq, 4, 'the restored log goes on from its own head');
    await until(() => statusCount(ws, 'r1') === 10);
    await sleep(100);
    const frames = story(ws, 'r1');
    t.match(frames[7], { subscribed: { epoch, head: 3, oldest: 1, recovered: false } }, 'told: the head is behind what it was sent');
    t.same(frames.slice(8), [[1, 1], [2, 2], [3, 3], [4, 104]], 'then the log as the snapshot has it, and live');
  });

  t.test('a pub/sub outage longer than the history: recovered false, then the oldest retained on', async (t) => {
    const redis = await startRedis(t);
    const proxy = await startTcpProxy(t, redis.port);
    const a = await startServer(t, { store: redis.url, historySize: 10 });
    const b = await startServer(t, { store: `redis://127.0.0.1:${proxy.port}`, historySize: 10 });
    const ws = await connect(b, '?session=h1');
    t.teardown(() => ws.ws.close());
    const first = await ws.next((f) => f.method === 'subscribed');
    for (let k = 1; k <= 5; k++) await post(a, 'h1', k);
    await until(() => statusCount(ws, 'h1') === 5);

    proxy.cut();
    while ((await b.get('/readyz')).status !== 503) await sleep(20); // instance B lost Redis
    for (let k = 6; k <= 35; k++) await post(a, 'h1', k);
    proxy.restore();
    await ws.next((f) => f.method === 'subscribed' && f.result.recovered === false, 15_000);
    await until(() => statusCount(ws, 'h1') === 15);
    await post(a, 'h1', 36);
    await until(() => statusCount(ws, 'h1') === 16);
    await sleep(100);
    const frames = story(ws, 'h1');
    t.same(frames[0], { subscribed: first.result });
    t.same(frames.slice(1, 6), range(1, 5).map((k) => [k, k]));
    t.same(frames[6], { subscribed: { session: 'h1', epoch: first.result.epoch, head: 35, oldest: 26, recovered: false } }, 'told that seqs 6..25 are gone');
    t.same(frames.slice(7), range(26, 36).map((k) => [k, k]), 'then the oldest retained on, and live');
  });

  t.test('start-up warns when Redis may evict keys or a 202 is not durable, and /readyz says which', async (t) => {
    const durable = await startRedis(t, { aof: true });
    const quiet = await spawnServer(t, { HOROLOGIUM_STORE: durable.url });
    const ready = await fetch(`${quiet.url}/readyz`);
    t.same([ready.status, await ready.json()], [200, { status: 'ready', store: 'redis', warnings: [] }], 'noeviction, AOF with appendfsync always: nothing to say');

    const redis = await startRedis(t); // no AOF
    t.match(await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru'), /^\+OK/);
    const warned = await spawnServer(t, { HOROLOGIUM_STORE: redis.url });
    const warning = (out: string) => logLines(out).filter((l) => l.level === 40 && typeof l.warning === 'string');
    // Log lines are written asynchronously: the start-up warnings may follow /healthz by a moment.
    await until(() => warning(warned.output()).length >= 2, 'the start-up warnings in the log', 15_000);
    t.same(warning(quiet.output()), [], 'no warning line from the durable Redis');
    t.match(warning(warned.output()), [
      { store: 'redis', warning: 'redis_evicts_keys', msg: /maxmemory-policy is allkeys-lru: .*set maxmemory-policy noeviction/ },
      { store: 'redis', warning: 'redis_no_aof', msg: /appendonly is no: a 202 is not durable.*set appendonly yes and appendfsync always/ },
    ]);
    t.equal(warning(warned.output()).length, 2);
    const readyz = async (): Promise<any> => (await fetch(`${warned.url}/readyz`)).json();
    t.match(await readyz(), { status: 'ready', store: 'redis', warnings: [{ code: 'redis_evicts_keys' }, { code: 'redis_no_aof' }] }, '/readyz: still ready, and says which');

    t.match(await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction'), /^\+OK/);
    t.match(await redis.command('CONFIG', 'SET', 'appendonly', 'yes'), /^\+OK/);
    t.match(await redis.command('CONFIG', 'SET', 'appendfsync', 'everysec'), /^\+OK/);
    let settled = await readyz();
    for (const end = Date.now() + 15_000; settled.warnings.length !== 1 && Date.now() < end; await sleep(250)) settled = await readyz();
    t.match(settled.warnings, [{ code: 'redis_aof_not_always', message: /appendfsync is everysec: a 202 is not durable/ }], 'fixed without a restart; everysec named');
  });
}
