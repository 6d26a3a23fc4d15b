/**
 * Per-session channels on Redis (docs/redis.md): two instances on one redis-server of this test's
 * own. An instance hears only the sessions it has subscribers (or long-polls) of, counted from the
 * messages its subscriber connections received (horologium_redis_messages_received_total), not
 * from timing; a subscriber arriving mid-burst gets every seq once; the last one leaving
 * unsubscribes the channel (PUBSUB SHARDNUMSUB); the subscriber connections cut mid-burst lose
 * nothing; watch_sessions across instances; and an older Redis is refused with a clear message.
 */
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { messagesReceived, requireRedis, startRedis, type RedisProcess } from '../helpers/redis.js';
import { startServer, type Running } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { connect, type Client } from '../helpers/ws-client.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const note = (k: number) => ({ type: 'note', data: { k } });
const statusSeqs = (c: Client, session: string) => c.frames.filter((f) => f.method === 'status' && f.result.session === session).map((f) => f.result.seq);


/** What the tests need of the Redis under them: a single redis-server, or a cluster. */
interface Backend {
  url: string;
  /** How many connections subscribe to a session's channel (PUBSUB SHARDNUMSUB on the node that holds it). */
  subscribers(session: string): Promise<number>;
  /** Cuts every subscriber connection (CLIENT KILL TYPE pubsub on every node); the replies. */
  killSubscribers(): Promise<string[]>;
}

const shardNumSub = (reply: string) => Number(/:(\d+)\r\n$/.exec(reply)?.[1]);

function single(redis: RedisProcess): Backend {
  return {
    url: redis.url,
    subscribers: async (session) => shardNumSub(await redis.command('PUBSUB', 'SHARDNUMSUB', `horologium:{${session}}:ch`)),
    killSubscribers: async () => [await redis.command('CLIENT', 'KILL', 'TYPE', 'pubsub')],
  };
}

function clustered(cluster: RedisCluster): Backend {
  return {
    url: cluster.url,
    subscribers: async (session) => {
      const channel = `horologium:{${session}}:ch`;
      return shardNumSub(await cluster.command(await cluster.masterOf(channel), 'PUBSUB', 'SHARDNUMSUB', channel));
    },
    killSubscribers: () => Promise.all(cluster.nodes.map((n) => cluster.command(n.port, 'CLIENT', 'KILL', 'TYPE', 'pubsub'))),
  };
}

/** Posts `count` events to a session, at most `inflight` at a time; resolves with every reply's status. */
async function burst(srv: Running, session: string, count: number, inflight = 10): Promise<number[]> {
  const statuses: number[] = [];
  for (let k = 1; k <= count; k += inflight) {
    const batch = range(k, Math.min(count, k + inflight - 1)).map((n) => srv.post(`/v1/sessions/${session}/events`, note(n)));
    statuses.push(...(await Promise.all(batch)).map((r) => r.status));
  }
  return statuses;
}

/** The suite, on a backend each test gets from `backend`. */
function channelSuite(t: Test, backend: (t: Test) => Promise<Backend>): void {
  t.test('an instance with no subscribers of a session receives none of its messages', async (t) => {
    const redis = await backend(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const onA = await connect(a, '?session=watched');
    t.teardown(() => onA.ws.close());
    await onA.next((f) => f.method === 'subscribed');
    const before = await messagesReceived(b);
    t.same(await burst(b, 'unwatched', 100), Array(100).fill(202), 'posted to B, subscribed by nobody');
    t.same(await burst(b, 'watched', 20), Array(20).fill(202), 'posted to B, subscribed on A');
    await onA.next((f) => f.method === 'status' && f.result.seq === 20);
    const afterB = await messagesReceived(b);
    t.equal(afterB.session - before.session, 0, 'B received no message of either session: it has no subscriber of them');
    t.equal(afterB.sessions - before.sessions, 0, 'nor of the sessions channel: it has no watcher');
    t.equal((await messagesReceived(a)).session, 20, 'A received exactly the 20 events of the session it has a subscriber of');
    t.equal(await redis.subscribers('unwatched'), 0);
    t.equal(await redis.subscribers('watched'), 1, 'one subscribing connection: A’s');
  });

  t.test('subscribers arriving mid-burst on the other instance get every seq exactly once', async (t) => {
    const redis = await backend(t);
    const a = await startServer(t, { store: redis.url, historySize: 10_000 });
    const b = await startServer(t, { store: redis.url, historySize: 10_000 });
    const total = 400;
    let acknowledged = 0;
    const producer = (async () => {
      for (let k = 1; k <= total; k += 5) {
        const replies = await Promise.all(range(k, k + 4).map((n) => a.post('/v1/sessions/mid/events', note(n))));
        acknowledged += replies.filter((r) => r.status === 202).length;
      }
    })();
    // Each arrives at another point of the burst, while B may or may not already follow the session.
    const replaying: Client[] = [];
    const live: Client[] = [];
    for (const at of [20, 60, 150, 250]) {
      await until(() => acknowledged >= at, `${at} posts`);
      const [r, l] = await Promise.all([connect(b, '?session=mid&since=0'), connect(b, '?session=mid')]);
      t.teardown(() => r.ws.close());
      t.teardown(() => l.ws.close());
      replaying.push(r);
      live.push(l);
    }
    await producer;
    t.equal(acknowledged, total);
    for (const c of [...replaying, ...live]) await c.next((f) => f.method === 'status' && f.result.seq === total, 15_000);
    for (const [k, c] of replaying.entries()) t.same(statusSeqs(c, 'mid'), range(1, total), `subscriber ${k + 1} with since=0: 1..${total}, each once`);
    for (const [k, c] of live.entries()) {
      const head = c.frames.find((f) => f.method === 'subscribed').result.head as number;
      t.same(statusSeqs(c, 'mid'), range(head + 1, total), `live-only subscriber ${k + 1}: from its head (${head}) on, each once`);
    }
  });

  t.test('the last subscriber leaving unsubscribes the channel; a long-poll follows the session while it waits', async (t) => {
    const redis = await backend(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const first = await connect(b, '?session=leave');
    const second = await connect(b, '?session=leave');
    await Promise.all([first, second].map((c) => c.next((f) => f.method === 'subscribed')));
    t.equal(await redis.subscribers('leave'), 1, 'two subscribers on B: one subscription of its connection');
    first.ws.close();
    await first.closed;
    await a.post('/v1/sessions/leave/events', note(1));
    await second.next((f) => f.method === 'status' && f.result.seq === 1);
    t.equal(await redis.subscribers('leave'), 1, 'still subscribed while one subscriber is left');
    second.ws.close();
    await second.closed;
    await until(async () => (await redis.subscribers('leave')) === 0, 'the channel unsubscribed').catch(() => undefined);
    t.equal(await redis.subscribers('leave'), 0, 'unsubscribed after the last one left (and the linger)');
    const quiet = (await messagesReceived(b)).session;
    await a.post('/v1/sessions/leave/events', note(2));
    const seen = await b.get('/v1/sessions/leave/events?after=1');
    t.equal(seen.json.events.length, 1, 'the event is stored');
    t.equal((await messagesReceived(b)).session, quiet, 'and B no longer receives the session’s messages');

    // A long-poll on B wakes at an entry committed through A, and B follows the session meanwhile.
    const poll = b.get('/v1/sessions/lp/queue?wait=20');
    await until(async () => (await redis.subscribers('lp')) === 1, 'the long-poll’s subscription', 5000).catch(() => undefined);
    t.equal(await redis.subscribers('lp'), 1, 'subscribed while the long-poll waits');
    const started = Date.now();
    t.equal((await a.post('/v1/sessions/lp/tool-results', { call_id: 'c1', name: 'n', result: 'r' })).status, 202);
    const page = await poll;
    t.same(page.json.entries.map((e: any) => e.call_id), ['c1'], 'woken by the entry committed on A');
    t.ok(Date.now() - started < 5000, 'long before the 20 s wait ran out');
  });

  t.test('the subscriber connections cut mid-burst: every subscriber still gets every seq once', async (t) => {
    const redis = await backend(t);
    const a = await startServer(t, { store: redis.url, historySize: 10_000 });
    const b = await startServer(t, { store: redis.url, historySize: 10_000 });
    const sessions = ['k1', 'k2', 'k3'];
    const subs = await Promise.all(sessions.map((s) => connect(b, `?session=${s}`)));
    t.teardown(() => subs.forEach((c) => c.ws.close()));
    await Promise.all(subs.map((c) => c.next((f) => f.method === 'subscribed')));
    const total = 200;
    const producers = sessions.map((s) => burst(a, s, total, 4));
    await until(() => subs.every((c) => statusSeqs(c, c.frames[0].result.session).length >= 30), 'the burst under way');
    t.ok((await redis.killSubscribers()).every((reply) => /^:\d/.test(reply)), 'every subscriber connection cut');
    for (const statuses of await Promise.all(producers)) t.same(statuses, Array(total).fill(202));
    for (const [k, c] of subs.entries()) {
      await c.next((f) => f.method === 'status' && f.result.seq === total, 15_000);
      t.same(statusSeqs(c, sessions[k] as string), range(1, total), `${sessions[k]}: 1..${total}, nothing missing, nothing twice`);
    }
    await until(async () => (await redis.subscribers('k1')) === 1, 'subscribed again');
  });

  t.test('watch_sessions across instances: changes on A reach a watcher on B, at most one message a second per session', async (t) => {
    const redis = await backend(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    const watcher = await connect(b);
    t.teardown(() => watcher.ws.close());
    watcher.ws.send(JSON.stringify({ method: 'watch_sessions', params: { prefix: 'w:' } }));
    await until(async () => /channel="sessions"/.test((await b.get('/metrics')).text), 'the metric');
    // watch_sessions has no reply: the sessions channel is subscribed once a change reaches B.
    await until(async () => {
      await a.post('/v1/sessions/w:probe/events', note(0));
      return watcher.frames.some((f) => f.method === 'session' && f.result.session === 'w:probe');
    }, 'the watch to start', 10_000);
    const before = await messagesReceived(b);
    const started = Date.now();
    t.same(await burst(a, 'w:1', 50), Array(50).fill(202));
    const took = Date.now() - started;
    const last = await watcher.next((f) => f.method === 'session' && f.result.session === 'w:1' && f.result.head === 50, 5000);
    t.equal(last.result.head, 50, 'the watcher ends with the session as it is (the change after the last message is looked at again)');
    const messages = (await messagesReceived(b)).sessions - before.sessions;
    t.ok(messages >= 1 && messages <= Math.ceil(took / 1000) + 1, `${messages} sessions-channel messages for 50 writes in ${took} ms`);
    t.equal((await messagesReceived(b)).session, 0, 'B received nothing of the session’s own channel');
    t.equal((await fetch(`${a.url}/v1/sessions/w:1`, { method: 'DELETE' })).status, 200);
    t.same(await watcher.next((f) => f.method === 'session' && f.result.deleted === true, 5000), { method: 'session', result: { session: 'w:1', deleted: true } });
  });
}

if (requireRedis(t)) {
  t.test('on a single Redis', async (t) => channelSuite(t, async (t) => single(await startRedis(t))));
  t.test('on a Redis Cluster (three masters, three replicas)', async (t) => {
    const cluster = await startRedisCluster(t);
    channelSuite(t, async () => clustered(cluster));
  });
}

t.test('a Redis older than 7 is refused at start-up, saying why', async (t) => {
  // A stand-in that answers INFO as Redis 6.2 does, and +OK to any other command (commands come
  // pipelined: each RESP array in a chunk gets its reply).
  const fake = createServer((socket) => {
    let buffered = '';
    socket.on('data', (data) => {
      buffered += data.toString();
      for (;;) {
        const command = /^\*(\d+)\r\n((?:\$\d+\r\n[^\r]*\r\n)*)/.exec(buffered);
        if (!command || command[2]!.split('\r\n').length - 1 < 2 * Number(command[1])) return;
        buffered = buffered.slice(command[0].length);
        if (/^\$4\r\nINFO\r\n/i.test(command[2]!)) {
          const info = '# Server\r\nredis_version:6.2.14\r\nredis_mode:standalone\r\nloading:0\r\n';
          socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
        } else socket.write('+OK\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => fake.close(resolve)));
  const { port } = fake.address() as { port: number };
  const store = new RedisStore(`redis://127.0.0.1:${port}`, { historySize: 10 });
  await t.rejects(store.open(), { message: /Redis 6\.2\.14 is too old: Horologium needs Redis 7\.0 or later/ });
  await store.close();
});
