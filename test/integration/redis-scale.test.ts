/**
 * Scale-out on Redis (issue 4): two Horologium instances on one redis-server of this test's own
 * (and the deployment-independent part on a Redis Cluster of its own too), real WebSocket clients,
 * and Redis killed, restarted and flushed during a stream. Exact seqs.
 */
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { spawnServer } from '../helpers/process.js';
import { recordingClient } from '../helpers/recording-client.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { requireRedis, startRedis } from '../helpers/redis.js';
import { client, startServer, type Running } from '../helpers/server.js';
import { connect } from '../helpers/ws-client.js';
import { sleep, until } from '../helpers/wait.js';

const post = (srv: { post: Running['post'] }, session: string, k: number) => srv.post(`/v1/sessions/${session}/events`, { type: 'note', data: { k } });
const statusSeqs = (frames: any[], session: string) => frames.filter((f) => f.method === 'status' && f.result.session === session).map((f) => f.result.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

/** The two-instance tests that hold on any Redis deployment: on a single Redis and on a cluster. */
function twoInstanceSuite(t: Test, storeUrl: (t: Test) => Promise<string>): void {
  t.test('any instance takes any request: replay then live across instances, no gap, no duplicate', async (t) => {
    const store = await storeUrl(t);
    const a = await startServer(t, { store, historySize: 10_000 });
    const b = await startServer(t, { store, historySize: 10_000 });
    const total = 300;
    let posted = 0;
    const producer = (async () => {
      const inflight: Promise<unknown>[] = [];
      for (let k = 1; k <= total; k++) {
        inflight.push(post(k % 2 ? a : b, 'x1', k).then(() => posted++));
        if (k % 20 === 0) await Promise.all(inflight.splice(0));
      }
      await Promise.all(inflight);
    })();
    await until(() => posted >= 60);
    const c = await connect(b, '?session=x1&since=0');
    t.teardown(() => c.ws.close());
    await producer;
    await c.next((f) => f.method === 'status' && f.result.seq === total, 15_000);
    await sleep(200);
    t.same(statusSeqs(c.frames, 'x1'), range(1, total), 'every seq once, in order, on the instance that did not take the posts');
  });

  t.test('two instances writing one session concurrently: no gap, no duplicate, idempotent across instances', async (t) => {
    const store = await storeUrl(t);
    const a = await startServer(t, { store });
    const b = await startServer(t, { store });
    const replies = await Promise.all(
      range(1, 200).map((k) => (k % 2 ? a : b).post('/v1/sessions/x2/tool-results', { call_id: `c${k}`, name: 'n', result: { k } })),
    );
    t.ok(replies.every((r) => r.status === 202));
    t.same(replies.map((r) => r.json.queue_seq).sort((x, y) => x - y), range(1, 200), 'queue_seq 1..200');
    t.same(replies.map((r) => r.json.event_seq).sort((x, y) => x - y), range(1, 200), 'event_seq 1..200');
    const same = await Promise.all([a, b, a, b].map((s) => s.post('/v1/sessions/x2/tool-results', { call_id: 'twice', name: 'n', result: 1 })));
    t.same(same.map((r) => r.status).sort(), [200, 200, 200, 202], 'one 202, the rest duplicates');
    t.equal(new Set(same.map((r) => r.json.queue_seq)).size, 1, 'all with the first reply’s numbers');
    // The same keyed event posted to both instances at once, eight times: one stored.
    const body = '{"type":"progress","data":{"n":12345678901234567890},"event_id":"ev-1"}';
    const keyed = await Promise.all([a, b, a, b, a, b, a, b].map((s) => s.post('/v1/sessions/x2e/events', body)));
    t.same(keyed.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 202], 'event_id: one 202, the rest duplicates');
    t.same(keyed.map((r) => r.json.event_seq), keyed.map(() => 1), 'all with the first seq');
    t.same(keyed.filter((r) => r.status === 200).map((r) => r.json.duplicate), Array(7).fill(true));
    const log = await a.get('/v1/sessions/x2e/events');
    t.same([log.json.head, log.json.events.length], [1, 1], 'stored once');
    t.match(log.text, /"data":\{"n":12345678901234567890\}/, 'byte for byte');
    const queue = await b.get('/v1/sessions/x2/queue?limit=1000');
    t.same(queue.json.entries.map((e: any) => e.queue_seq), range(1, 201));
    t.equal(new Set(queue.json.entries.map((e: any) => e.call_id)).size, 201, 'each call_id once');
    // A tool-calls on one instance, its result on the other: the arguments and timing carry over.
    await a.post('/v1/sessions/x2/tool-calls', { call_id: 'pair', name: 'grep', args: { q: 'x' } });
    const done = await b.post('/v1/sessions/x2/tool-results', { call_id: 'pair', name: 'grep', result: 'r' });
    t.equal(done.status, 202);
    const event = (await a.get(`/v1/sessions/x2/events?after=${done.json.event_seq - 1}`)).json.events[0];
    t.match(JSON.parse(JSON.stringify(event)), { result: { type: 'tool_completed', data: { arguments: { q: 'x' } } } });
    t.type(event.result.data.execution_time, 'number', 'measured from the tool_starting event of the other instance');
  });

  t.test('one instance killed during a stream: the client resumes on the other, every event once', async (t) => {
    const store = await storeUrl(t);
    const env = { HOROLOGIUM_STORE: store, HOROLOGIUM_HEARTBEAT_MS: '500' };
    const a = await spawnServer(t, env);
    const b = await spawnServer(t, env);
    const { client: c, events, subscribed } = recordingClient(t, [a.url, b.url].map((u) => `${u.replace('http', 'ws')}/v1/stream`));
    c.subscribe('x6', 0);
    const producer = client(b.url);
    let k = 0;
    const produce = async (n: number) => {
      for (let i = 0; i < n; i++) t.equal((await post(producer, 'x6', ++k)).status, 202);
    };
    await produce(40);
    await until(() => events.length === 40);
    a.child.kill('SIGKILL');
    await produce(40);
    await until(() => events.length >= 80);
    await sleep(300);
    t.same(events.map((e) => e.seq), range(1, 80), 'every event exactly once, in order, across the instance change');
    t.equal(subscribed.length, 2, 'subscribed again, on the other instance');
    t.equal(subscribed[1]?.recovered, true);
  });
}

if (requireRedis(t)) {
  t.test('on a single Redis', async (t) => twoInstanceSuite(t, async (t) => (await startRedis(t)).url));
  t.test('on a Redis Cluster (three masters, three replicas)', async (t) => {
    const cluster = await startRedisCluster(t);
    twoInstanceSuite(t, async () => cluster.url);
  });

  t.test('Redis down: 503 and not ready, sockets stay; Redis back with AOF: nothing acknowledged lost, fan-out resumes', async (t) => {
    const redis = await startRedis(t, { aof: true });
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const acked: string[] = [];
    for (let k = 1; k <= 50; k++) {
      const r = await a.post('/v1/sessions/x3/tool-results', { call_id: `pre${k}`, name: 'n', result: { k } });
      if (r.status === 202) acked.push(`pre${k}`);
    }
    t.equal(acked.length, 50);
    const c = await connect(b, '?session=x3');
    t.teardown(() => c.ws.close());
    await c.next((f) => f.method === 'subscribed');

    await redis.kill();
    const down = await a.post('/v1/sessions/x3/tool-results', { call_id: 'during', name: 'n', result: 1 });
    t.equal(down.status, 503);
    t.equal(down.json.error.code, 'STORE_UNAVAILABLE');
    t.ok(Number(down.headers.get('retry-after')) >= 1, 'with Retry-After');
    t.equal((await a.get('/readyz')).status, 503, '/readyz says so');
    t.equal((await b.get('/readyz')).status, 503);
    await sleep(1000);
    t.equal(c.ws.readyState, WebSocket.OPEN, 'the WebSocket client stays connected');

    await redis.start();
    let back = await a.get('/readyz');
    for (let k = 0; k < 100 && back.status !== 200; k++) {
      await sleep(100);
      back = await a.get('/readyz');
    }
    t.equal(back.status, 200, 'ready again without a restart');
    const queue = await a.get('/v1/sessions/x3/queue?after=0&limit=1000');
    t.same(queue.json.entries.map((e: any) => e.call_id), acked, 'every acknowledged entry survived the kill (AOF, appendfsync always)');
    t.notOk(queue.json.entries.some((e: any) => e.call_id === 'during'), 'the 503 stored nothing');
    // Fan-out resumes: the subscriber on B hears posts to A (B's pub/sub connection re-subscribed).
    let after: any;
    for (let k = 0; k < 50; k++) {
      after = await post(a, 'x3', 1000 + k);
      if (after.status === 202) break;
      await sleep(100);
    }
    const live = await c.next((f) => f.method === 'status', 10_000);
    t.equal(live.result.seq, after.json.event_seq, 'live events flow again');
  });

  t.test('a lost pub/sub connection: the subscriber gets what was published meanwhile, in order', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const c = await connect(b, '?session=x4');
    t.teardown(() => c.ws.close());
    await c.next((f) => f.method === 'subscribed');
    for (let k = 1; k <= 5; k++) await post(a, 'x4', k);
    await until(() => statusSeqs(c.frames, 'x4').length === 5);
    // Cut every subscriber connection; posts go on meanwhile, their messages are lost.
    t.match(await redis.command('CLIENT', 'KILL', 'TYPE', 'pubsub'), /^:\d/);
    for (let k = 6; k <= 30; k++) await post(a, 'x4', k);
    await until(() => statusSeqs(c.frames, 'x4').length >= 30);
    for (let k = 31; k <= 35; k++) await post(a, 'x4', k);
    await until(() => statusSeqs(c.frames, 'x4').length >= 35);
    t.same(statusSeqs(c.frames, 'x4'), range(1, 35), 'nothing missing, nothing twice');
  });

  t.test('flushed keys: the epoch changes and a resume is not "recovered"', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    for (let k = 1; k <= 3; k++) await post(a, 'x5', k);
    const before = (await a.get('/v1/sessions/x5/events')).json;
    await redis.command('FLUSHALL');
    await post(a, 'x5', 99);
    const c = await connect(a, `?session=x5&since=3&epoch=${before.epoch}`);
    t.teardown(() => c.ws.close());
    const sub = await c.next((f) => f.method === 'subscribed');
    t.not(sub.result.epoch, before.epoch, 'a new epoch');
    t.equal(sub.result.recovered, false);
    t.match(await c.next((f) => f.method === 'status'), { result: { seq: 1, data: { k: 99 } } }, 'the replay starts at the oldest retained');
  });
}
