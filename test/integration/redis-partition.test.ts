/**
 * Network faults between an instance and its Redis (issue 45): instance A reaches Redis through a
 * fault proxy, instance B directly; producers write to both and a subscriber on each follows one
 * session. Black hole (a half-open partition), delay and reset, each with exact assertions: every
 * answer within the store timeout plus a second, a 503 with Retry-After (never another 5xx) while
 * A cannot reach Redis, /readyz within a second and flipping both ways, A serving writes again
 * within two seconds of the link's return, nothing acknowledged lost or stored twice (byte for
 * byte), and both subscribers gap-free.
 */
import t, { type Test } from 'tap';
import { requireRedis, startRedis } from '../helpers/redis.js';
import { recordingClient } from '../helpers/recording-client.js';
import { startServer, type Running } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { sleep, until } from '../helpers/wait.js';
import { resultText, timedPost as post, type Answer } from '../helpers/timed-post.js';

const TIMEOUT_MS = 2000;
interface Readiness {
  status: number;
  ms: number;
  at: number;
}

async function readyz(srv: Running, origin: number): Promise<Readiness> {
  const started = Date.now();
  const res = await fetch(`${srv.url}/readyz`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  if (res) await res.arrayBuffer();
  return { status: res?.status ?? 0, ms: Date.now() - started, at: started - origin };
}

interface Scenario {
  before: number;
  during: number;
  after: number;
  fault(proxy: TcpProxy): void;
  heal(proxy: TcpProxy): void;
}

/** Runs producers (one per instance, one post every 100 ms, each waiting for its answer) and readiness probes through a fault. */
async function underFault(t: Test, scenario: Scenario) {
  const redis = await startRedis(t, { aof: true });
  const proxy = await startTcpProxy(t, redis.port);
  const a = await startServer(t, { store: `redis://127.0.0.1:${proxy.port}`, storeTimeoutMs: TIMEOUT_MS, rateLimit: 0 });
  const b = await startServer(t, { store: redis.url, storeTimeoutMs: TIMEOUT_MS, rateLimit: 0 });
  const session = 'part1';
  const onA = recordingClient(t, `${a.url.replace('http', 'ws')}/v1/stream`);
  const onB = recordingClient(t, `${b.url.replace('http', 'ws')}/v1/stream`);
  onA.client.subscribe(session, 0);
  onB.client.subscribe(session, 0);
  await until(() => onA.subscribed.length > 0 && onB.subscribed.length > 0, 'both subscribers subscribed');

  const faultAt = Date.now() + scenario.before;
  const healAt = faultAt + scenario.during;
  const endAt = healAt + scenario.after;
  const answers = { a: [] as Answer[], b: [] as Answer[] };
  const ready: Readiness[] = [];
  const producer = async (srv: Running, prefix: 'a' | 'b') => {
    for (let k = 1; Date.now() < endAt; k++) {
      answers[prefix].push(await post(srv, session, `${prefix}${k}`, faultAt));
      await sleep(100);
    }
  };
  const prober = async () => {
    while (Date.now() < endAt) {
      ready.push(await readyz(a, faultAt));
      await sleep(250);
    }
  };
  const timeline = (async () => {
    await sleep(faultAt - Date.now());
    scenario.fault(proxy);
    await sleep(healAt - Date.now());
    scenario.heal(proxy);
  })();
  await Promise.all([producer(a, 'a'), producer(b, 'b'), prober(), timeline]);
  return { redis, proxy, a, b, session, onA, onB, answers, ready, healMs: healAt - faultAt };
}

/** Every acknowledged result is in the queue once, byte for byte; what was refused is retried (through B) and then is too. */
async function nothingLostOrDoubled(t: Test, run: Awaited<ReturnType<typeof underFault>>) {
  const { a, b, session, answers } = run;
  const all = [...answers.a, ...answers.b];
  for (const refused of all.filter((x) => x.status !== 202)) {
    // A refused write's fate is unknown (its command may have run): the retry stores it (202) or finds it stored (200, duplicate).
    const again = await post(b, session, refused.id, 0);
    t.ok([200, 202].includes(again.status), `${refused.id}, refused with ${refused.status}, is settled by its retry (${again.status})`);
  }
  const queue = (await b.get(`/v1/sessions/${session}/queue?limit=1000`)).json as { entries: Array<{ call_id: string; message: { content: string } }> };
  const counts = new Map<string, number>();
  for (const e of queue.entries) counts.set(e.call_id, (counts.get(e.call_id) ?? 0) + 1);
  t.same(
    all.map((x) => x.id).filter((id) => counts.get(id) !== 1),
    [],
    'every posted result is in the queue exactly once',
  );
  t.equal(queue.entries.length, all.length, 'and nothing else');
  t.same(
    queue.entries.filter((e) => e.message.content !== resultText(e.call_id)).map((e) => e.call_id),
    [],
    'byte for byte',
  );
  // Both subscribers: every seq once, in order, through the fault.
  const head = (await a.get(`/v1/sessions/${session}/events?limit=1`)).json.head as number;
  for (const [name, rec] of [
    ['A (through the fault)', run.onA],
    ['B', run.onB],
  ] as const) {
    await until(() => rec.events.length >= head, `the subscriber on ${name} reaching seq ${head}`, 15_000);
    t.same(
      rec.events.map((e) => e.seq),
      Array.from({ length: head }, (_, k) => k + 1),
      `the subscriber on ${name} saw 1..${head} once each, in order`,
    );
  }
  void a;
}

if (requireRedis(t)) {
  t.test('black hole (a half-open partition) on A\'s link: 503 within the deadline, readiness flips, recovery within 2 s, nothing lost', async (t) => {
    const run = await underFault(t, {
      before: 1500,
      during: 6000,
      after: 4000,
      fault: (proxy) => proxy.mode({ kind: 'blackhole' }),
      heal: (proxy) => proxy.mode({ kind: 'pass' }),
    });
    const { answers, ready, healMs } = run;
    const slowest = Math.max(...answers.a.map((x) => x.ms));
    t.ok(slowest <= TIMEOUT_MS + 1000, `every answer of A within the timeout plus a second (slowest ${slowest} ms)`);
    t.same(answers.a.filter((x) => x.status !== 202 && x.status !== 503).map((x) => `${x.id}: ${x.status}`), [], 'A answered only 202 or 503');
    const refused = answers.a.filter((x) => x.status === 503);
    t.ok(refused.length > 0, `A answered 503 during the cut (${refused.length} times)`);
    t.ok(refused.every((x) => x.retryAfter !== null && Number(x.retryAfter) >= 0), 'each 503 with Retry-After');
    // A request sent just before the cut whose reply the cut swallowed is refused too: each 503 was
    // in flight while the link was cut.
    t.same(refused.filter((x) => !(x.at + x.ms >= 0 && x.at < healMs + TIMEOUT_MS)).map((x) => `${x.id} at ${x.at} ms`), [], 'only requests in flight while the link was cut');
    t.same(answers.b.filter((x) => x.status !== 202).map((x) => `${x.id}: ${x.status}`), [], 'B, on a sound link, took every write');
    const firstAfter = answers.a.find((x) => x.at >= healMs && x.status === 202);
    const recovery = firstAfter ? firstAfter.at + firstAfter.ms - healMs : Infinity;
    t.ok(recovery <= 2000, `A serves writes again within 2 s of the link's return (${recovery} ms)`);
    t.ok(ready.every((r) => r.ms <= 1000), `/readyz always answered within 1 s (slowest ${Math.max(...ready.map((r) => r.ms))} ms)`);
    t.ok(ready.some((r) => r.at > TIMEOUT_MS + 1000 && r.at < healMs && r.status === 503), '/readyz is 503 during the cut');
    t.ok(ready.filter((r) => r.at < 0).every((r) => r.status === 200), 'and 200 before it');
    t.equal(ready.at(-1)?.status, 200, 'and 200 again after it');
    t.comment(`black hole: slowest answer ${slowest} ms, ${refused.length} 503s, recovery ${recovery} ms`);
    await nothingLostOrDoubled(t, run);
  });

  t.test('delay (150 ms each way) on A\'s link: slower, never refused', async (t) => {
    const run = await underFault(t, {
      before: 1000,
      during: 3000,
      after: 1500,
      fault: (proxy) => proxy.mode({ kind: 'delay', delayMs: 150 }),
      heal: (proxy) => proxy.mode({ kind: 'pass' }),
    });
    t.same(run.answers.a.filter((x) => x.status !== 202).map((x) => `${x.id}: ${x.status}`), [], 'every write of A acknowledged');
    t.ok(run.ready.every((r) => r.status === 200 && r.ms <= 1000), '/readyz stays 200, within 1 s');
    await nothingLostOrDoubled(t, run);
  });

  t.test('reset of every connection on A\'s link: at most a few 503s, then back', async (t) => {
    const run = await underFault(t, {
      before: 1000,
      during: 200,
      after: 3000,
      fault: (proxy) => proxy.reset(),
      heal: () => undefined,
    });
    t.same(run.answers.a.filter((x) => x.status !== 202 && x.status !== 503).map((x) => `${x.id}: ${x.status}`), [], 'A answered only 202 or 503');
    t.ok(run.answers.a.every((x) => x.ms <= TIMEOUT_MS + 1000), 'each within the deadline');
    t.equal(run.answers.a.at(-1)?.status, 202, 'A takes writes again');
    await nothingLostOrDoubled(t, run);
  });
}
