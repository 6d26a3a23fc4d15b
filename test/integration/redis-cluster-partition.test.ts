/**
 * A half-open partition between an instance and one node of a Redis Cluster (issue 45, part 5):
 * instance A reaches each of the three masters through a fault proxy of its own
 * (HOROLOGIUM_REDIS_NAT_MAP maps the addresses the nodes announce to the proxies), instance B
 * reaches them directly. One master's link of A is black-holed for 6 s: only that master's
 * sessions answer 503 on A (with Retry-After, within the timeout plus a second), the others' go on,
 * B takes everything, A serves the cut master's sessions again within 2 s of the link's return,
 * and every result ends up in its queue exactly once, byte for byte.
 */
import t from 'tap';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { requireRedis } from '../helpers/redis.js';
import { startServer, type Running } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { resultText, timedPost, type Answer } from '../helpers/timed-post.js';
import { sleep } from '../helpers/wait.js';

const TIMEOUT_MS = 2000;

if (requireRedis(t)) {
  t.test("one master's link black-holed: only its sessions answer 503, and only on that instance", async (t) => {
    const cluster = await startRedisCluster(t, 3);
    const proxies = new Map<number, TcpProxy>();
    for (const node of cluster.nodes) proxies.set(node.port, await startTcpProxy(t, node.port));
    const natMap = Object.fromEntries([...proxies].map(([port, proxy]) => [`127.0.0.1:${port}`, { host: '127.0.0.1', port: proxy.port }]));
    const a = await startServer(t, {
      store: `redis+cluster://${[...proxies.values()].map((p) => `127.0.0.1:${p.port}`).join(',')}`,
      redisNatMap: natMap,
      storeTimeoutMs: TIMEOUT_MS,
      rateLimit: 0,
    });
    const b = await startServer(t, { store: cluster.url, storeTimeoutMs: TIMEOUT_MS, rateLimit: 0 });

    // One session on each master; the first master's link is the one cut.
    const sessionOf = new Map<number, string>();
    for (let k = 0; sessionOf.size < 3; k++) {
      const port = await cluster.masterOf(`horologium:{cp${k}}:heads`);
      if (!sessionOf.has(port)) sessionOf.set(port, `cp${k}`);
    }
    const [cutPort, cutSession] = [...sessionOf][0]!;
    const others = [...sessionOf.values()].filter((s) => s !== cutSession);

    const faultAt = Date.now() + 1500;
    const healAt = faultAt + 6000;
    const endAt = healAt + 4000;
    const answers = new Map<string, Answer[]>([...sessionOf.values()].map((s) => [s, []]));
    const fromB: Answer[] = [];
    const producer = async (srv: Running, session: string, into: Answer[], prefix: string) => {
      for (let k = 1; Date.now() < endAt; k++) {
        into.push(await timedPost(srv, session, `${prefix}${k}`, faultAt));
        await sleep(100);
      }
    };
    const ready: Array<{ status: number; ms: number; at: number }> = [];
    const prober = async () => {
      while (Date.now() < endAt) {
        const started = Date.now();
        const res = await fetch(`${a.url}/readyz`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
        ready.push({ status: res?.status ?? 0, ms: Date.now() - started, at: started - faultAt });
        await res?.arrayBuffer();
        await sleep(250);
      }
    };
    const timeline = (async () => {
      await sleep(faultAt - Date.now());
      proxies.get(cutPort)!.mode({ kind: 'blackhole' });
      await sleep(healAt - Date.now());
      proxies.get(cutPort)!.mode({ kind: 'pass' });
    })();
    await Promise.all([
      ...[...sessionOf.values()].map((s) => producer(a, s, answers.get(s)!, `a-${s}-`)),
      producer(b, cutSession, fromB, `b-${cutSession}-`),
      prober(),
      timeline,
    ]);

    const all = [...answers.values()].flat();
    const slowest = Math.max(...all.map((x) => x.ms));
    t.ok(slowest <= TIMEOUT_MS + 1000, `every answer of A within the timeout plus a second (slowest ${slowest} ms)`);
    t.same(all.filter((x) => x.status !== 202 && x.status !== 503).map((x) => `${x.id}: ${x.status}`), [], 'A answered only 202 or 503');
    const cut = answers.get(cutSession)!;
    const refused = cut.filter((x) => x.status === 503);
    t.ok(refused.length > 0, `the cut master's session answered 503 on A (${refused.length} times)`);
    t.ok(refused.every((x) => x.retryAfter !== null), 'each with Retry-After');
    for (const s of others) t.same(answers.get(s)!.filter((x) => x.status !== 202).map((x) => x.id), [], `${s}, on another master, took every write on A`);
    t.same(fromB.filter((x) => x.status !== 202).map((x) => x.id), [], 'B took every write of the cut master\'s session');
    const firstAfter = cut.find((x) => x.at >= 6000 && x.status === 202);
    const recovery = firstAfter ? firstAfter.at + firstAfter.ms - 6000 : Infinity;
    t.ok(recovery <= 2000, `A serves the cut master's session again within 2 s of the link's return (${recovery} ms)`);
    t.ok(ready.every((r) => r.ms <= 1000), `/readyz on A always answered within 1 s (slowest ${Math.max(...ready.map((r) => r.ms))} ms)`);
    t.ok(ready.some((r) => r.at > TIMEOUT_MS + 1000 && r.at < 6000 && r.status === 503), '/readyz on A is 503 while a master cannot be reached');
    t.equal(ready.at(-1)?.status, 200, 'and 200 again after');
    t.comment(`cluster black hole: slowest answer ${slowest} ms, ${refused.length} 503s on the cut master's session, recovery ${recovery} ms`);

    // Retry what was refused (through B), then every result is in its session's queue once.
    for (const x of [...all, ...fromB].filter((x) => x.status !== 202)) {
      const session = x.id.startsWith('b-') ? cutSession : x.id.split('-')[1]!;
      // A refused write's fate is unknown (its command may have run): the retry stores it (202) or finds it stored (200, duplicate).
      t.ok([200, 202].includes((await timedPost(b, session, x.id, 0)).status), `${x.id} settled by its retry`);
    }
    for (const session of sessionOf.values()) {
      const posted = [...(answers.get(session) ?? []), ...(session === cutSession ? fromB : [])].map((x) => x.id).sort();
      const entries = (await b.get(`/v1/sessions/${session}/queue?limit=1000`)).json.entries as Array<{ call_id: string; message: { content: string } }>;
      t.same(entries.map((e) => e.call_id).sort(), posted, `${session}: every result once`);
      t.same(entries.filter((e) => e.message.content !== resultText(e.call_id)).map((e) => e.call_id), [], `${session}: byte for byte`);
    }
  });
}
