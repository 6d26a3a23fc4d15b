/**
 * Two Horologium instances on a real Redis Cluster of this test's own (three masters, three
 * replicas, test/helpers/redis-cluster.ts): one sessions list from both over every slot range,
 * per-session channels on the masters of the sessions' slots, and a master killed mid-burst.
 */
import t from 'tap';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { messagesReceived, requireRedis } from '../helpers/redis.js';
import { startServer, type Running } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { connect, type Client } from '../helpers/ws-client.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const note = (k: number) => ({ type: 'note', data: { k } });
const statusSeqs = (c: Client, session: string) => c.frames.filter((f) => f.method === 'status' && f.result.session === session).map((f) => f.result.seq);

async function listAll(srv: Running, limit: number): Promise<string[]> {
  const sessions: string[] = [];
  for (let cursor = ''; ; ) {
    const page = (await srv.get(`/v1/sessions?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)).json;
    sessions.push(...page.sessions.map((s: any) => s.session));
    if (!page.next) return sessions;
    cursor = page.next;
  }
}

/** Sessions whose keys live on each master: `perMaster` of them for every master port. */
async function sessionsByMaster(cluster: RedisCluster, perMaster: number, prefix: string): Promise<Map<number, string[]>> {
  const byMaster = new Map<number, string[]>();
  for (let k = 0; [...byMaster.values()].filter((s) => s.length >= perMaster).length < 3; k++) {
    const session = `${prefix}${k}`;
    const port = await cluster.masterOf(`horologium:{${session}}:heads`);
    const list = byMaster.get(port) ?? [];
    if (list.length < perMaster) list.push(session);
    byMaster.set(port, list);
  }
  return byMaster;
}

const received = async (srv: Running): Promise<number> => (await messagesReceived(srv)).session;

if (requireRedis(t)) {
  const cluster = await startRedisCluster(t);

  t.test('two instances on the cluster: one sessions list of 1,000 sessions over every slot range, from both', async (t) => {
    const a = await startServer(t, { store: cluster.url });
    const b = await startServer(t, { store: cluster.url });
    const ids = Array.from({ length: 1000 }, (_, k) => `list-${k}`);
    for (let k = 0; k < ids.length; k += 50) {
      const replies = await Promise.all(ids.slice(k, k + 50).map((s, j) => ((k + j) % 2 ? a : b).post(`/v1/sessions/${s}/events`, note(k + j))));
      t.ok(replies.every((r) => r.status === 202), `batch ${k / 50 + 1} stored`);
    }
    const masters = new Set(await Promise.all(ids.slice(0, 60).map((s) => cluster.masterOf(`horologium:{${s}}:heads`))));
    t.equal(masters.size, 3, 'the sessions live on all three masters');
    const fromA = await listAll(a, 100);
    const fromB = await listAll(b, 100);
    t.equal(fromA.length, 1000, 'every session listed');
    t.equal(new Set(fromA).size, 1000, 'each once');
    t.same(fromB, fromA, 'the same order from the other instance');
    t.same((await b.get('/v1/sessions?limit=7')).json, (await a.get('/v1/sessions?limit=7')).json, 'the same first page');
  });

  t.test('per-session channels on the cluster: mid-burst subscribers get 1..N once; no messages without subscribers', async (t) => {
    const a = await startServer(t, { store: cluster.url, historySize: 10_000 });
    const b = await startServer(t, { store: cluster.url, historySize: 10_000 });
    const byMaster = await sessionsByMaster(cluster, 1, 'burst-');
    const sessions = [...byMaster.values()].flat();
    const before = await received(a);
    const total = 150;
    let acknowledged = 0;
    const producer = (async () => {
      for (let k = 1; k <= total; k++) {
        const replies = await Promise.all(sessions.map((s) => a.post(`/v1/sessions/${s}/events`, note(k))));
        acknowledged += replies.filter((r) => r.status === 202).length;
      }
    })();
    await until(() => acknowledged >= 30 * sessions.length, 'the burst under way');
    const subs = await Promise.all(sessions.map((s) => connect(b, `?session=${s}&since=0`)));
    t.teardown(() => subs.forEach((c) => c.ws.close()));
    await producer;
    t.equal(acknowledged, total * sessions.length);
    for (const [k, c] of subs.entries()) {
      const session = sessions[k] as string;
      await c.next((f) => f.method === 'status' && f.result.session === session && f.result.seq === total, 15_000);
      t.same(statusSeqs(c, session), range(1, total), `${session} (master ${[...byMaster].find(([, s]) => s.includes(session))?.[0]}): 1..${total}, each once`);
    }
    t.equal((await received(a)) - before, 0, 'A, which took the posts and has no subscriber, received none of their messages');
    for (const session of sessions) {
      const master = await cluster.masterOf(`horologium:{${session}}:ch`);
      t.match(await cluster.command(master, 'PUBSUB', 'SHARDNUMSUB', `horologium:{${session}}:ch`), /:1\r\n$/, `${session}'s channel has one subscriber on its master`);
    }
  });

  t.test('a master killed mid-burst: 503s for its sessions only, nothing acknowledged lost, the others see no gap, recovery without a restart', async (t) => {
    // A cluster of its own: this test breaks it.
    const broken = await startRedisCluster(t);
    const settings = { store: broken.url, redisWaitReplicas: 1, historySize: 10_000 };
    const a = await startServer(t, settings);
    const b = await startServer(t, settings);
    const byMaster = await sessionsByMaster(broken, 1, 'fo-');
    const [[victimPort, [victim]], ...rest] = [...byMaster] as [[number, string[]], ...Array<[number, string[]]>];
    const others = rest.map(([, [s]]) => s as string);
    const sessions = [victim as string, ...others];
    const subs = new Map<string, Client>();
    for (const s of sessions) subs.set(s, await connect(b, `?session=${s}&since=0`));
    t.teardown(() => [...subs.values()].forEach((c) => c.ws.close()));
    await Promise.all([...subs.values()].map((c) => c.next((f) => f.method === 'subscribed')));

    const statuses = new Map<string, number[]>(sessions.map((s) => [s, []]));
    const acked = new Map<string, string[]>(sessions.map((s) => [s, []]));
    let retryAfterMissing = 0;
    let killed = false;
    let recoveredPosts = 0;
    const deadline = Date.now() + 40_000;
    const producer = async (session: string) => {
      for (let k = 1; Date.now() < deadline && recoveredPosts < 20; k++) {
        const callId = `${session}-${k}`;
        const r = await a.post(`/v1/sessions/${session}/tool-results`, { call_id: callId, name: 'n', result: { k } });
        statuses.get(session)?.push(r.status);
        if (r.status === 202) acked.get(session)?.push(callId);
        else if (!r.headers.get('retry-after')) retryAfterMissing++;
        if (r.status !== 202) await new Promise((res) => setTimeout(res, 100));
        if (session === victim && killed && r.status === 202) recoveredPosts++;
      }
    };
    const producing = Promise.all(sessions.map(producer));
    await until(() => sessions.every((s) => (acked.get(s)?.length ?? 0) >= 40), 'the burst under way', 20_000);
    await broken.kill(victimPort);
    killed = true;
    // Its replica takes over (node timeout 2 s); a write must reach one replica (WAIT 1), and the
    // promoted one has none until the dead master comes back as its replica, as an orchestrator
    // would restart it: until then the victim's writes are 503s, never a 202 that could be lost.
    await until(() => (statuses.get(victim as string) ?? []).includes(503), 'a 503 for the victim', 10_000);
    await new Promise((res) => setTimeout(res, 4000));
    await broken.restart(victimPort);
    await producing;
    t.ok(recoveredPosts >= 20, 'the victim session takes writes again once a replica is promoted, without a restart');
    const victimStatuses = statuses.get(victim as string) ?? [];
    t.ok(victimStatuses.includes(503), `the victim session got 503s meanwhile (${victimStatuses.filter((x) => x === 503).length})`);
    t.same([...new Set(victimStatuses)].sort(), [202, 503], 'and nothing but 202 and 503');
    t.equal(retryAfterMissing, 0, 'every 503 with Retry-After');
    for (const s of others) t.same([...new Set(statuses.get(s))], [202], `${s}, on another master: every write accepted`);

    for (const s of sessions) {
      const stored = new Set<string>();
      for (let after = 0; ; ) {
        const queue = (await b.get(`/v1/sessions/${s}/queue?after=${after}&limit=1000`)).json;
        for (const e of queue.entries) stored.add(e.call_id);
        if (queue.entries.length === 0) break;
        after = queue.entries[queue.entries.length - 1].queue_seq;
      }
      t.same((acked.get(s) ?? []).filter((id) => !stored.has(id)), [], `${s}: every acknowledged result is in the queue after the failover`);
      const head = (await b.get(`/v1/sessions/${s}`)).json.head as number;
      const c = subs.get(s) as Client;
      await c.next((f) => f.method === 'status' && f.result.session === s && f.result.seq === head, 15_000);
      const lastSubscribed = c.frames.map((f) => f.method).lastIndexOf('subscribed');
      const after = c.frames.slice(lastSubscribed).filter((f) => f.method === 'status').map((f) => f.result.seq);
      t.same(after, range(1, head), `${s}: its subscriber on B has every event once, 1..${head}`);
      if (s !== victim) t.equal(c.frames.filter((f) => f.method === 'subscribed').length, 1, `${s}: no new subscription: no gap`);
    }
  });
}
