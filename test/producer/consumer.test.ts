/**
 * The queue consumer (horologium/producer) against real servers on a sqlite file: batches acked as
 * the loop moves on, manual acks, long-poll, close, and a server restart in the middle of reading
 * (nothing acknowledged is handed out again, nothing is lost).
 */
import t from 'tap';
import { Producer, QueueConsumer, type QueueEntry } from '../../src/producer/index.js';
import { restartableServer, startServer } from '../helpers/server.js';
import { sleep, until } from '../helpers/wait.js';

const FAST = { initialMs: 20, maxMs: 200 };

async function results(producer: Producer, session: string, from: number, to: number): Promise<void> {
  for (let k = from; k <= to; k++) await producer.toolResult(session, { call_id: `c${k}`, name: 'n', result: { k } });
}

t.test('iterates from the committed cursor; each batch is acknowledged once the loop moves past it', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  await results(producer, 'q1', 1, 5);
  const consumer = new QueueConsumer({ url: srv.url, session: 'q1', limit: 2, wait: 1 });
  const seen: number[] = [];
  for await (const entry of consumer) {
    seen.push(entry.queue_seq);
    t.equal(entry.message.content, `{"k":${entry.queue_seq}}`);
    if (seen.length === 5) break;
  }
  t.same(seen, [1, 2, 3, 4, 5]);
  const queue = (await srv.get('/v1/sessions/q1/queue')).json;
  t.equal(queue.committed, 4, 'batches [1,2] and [3,4] acknowledged; [5] was left mid-batch, so it is not');
  const next = new QueueConsumer({ url: srv.url, session: 'q1', wait: 0 });
  t.same((await next.read()).entries.map((e) => e.queue_seq), [5], 'a new consumer starts from the committed cursor');
});

t.test('leaving the loop early acknowledges every entry before the last one it was given: break, return, exception', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  const committed = async (session: string) => (await srv.get(`/v1/sessions/${session}/queue`)).json.committed as number;
  for (const session of ['b1', 'b2', 'b3', 'b4']) await results(producer, session, 1, 6);

  // break in the middle of the first batch (limit 100: all six in one batch)
  for await (const entry of new QueueConsumer({ url: srv.url, session: 'b1', wait: 0 })) if (entry.queue_seq === 3) break;
  t.equal(await committed('b1'), 2, 'break at 3: 1 and 2 acknowledged, 3 handed out again');

  // return from a function, mid-batch of a later batch
  const firstOver = async () => {
    for await (const entry of new QueueConsumer({ url: srv.url, session: 'b2', wait: 0, limit: 2 })) if (entry.queue_seq === 4) return entry.queue_seq;
    return 0;
  };
  t.equal(await firstOver(), 4);
  t.equal(await committed('b2'), 3, 'return at 4: 1 to 3 acknowledged');

  // an exception in the loop's body
  await t.rejects(async () => {
    for await (const entry of new QueueConsumer({ url: srv.url, session: 'b3', wait: 0 })) if (entry.queue_seq === 5) throw new Error('the model call failed');
  }, /the model call failed/);
  t.equal(await committed('b3'), 4, 'an exception at 5: 1 to 4 acknowledged, 5 kept for the next consumer');
  t.same((await new QueueConsumer({ url: srv.url, session: 'b3', wait: 0 }).read()).entries.map((e) => e.queue_seq), [5, 6]);

  // the loop of docs/sdk-and-cli.md: the last entry acknowledged by hand before break
  const consumer = new QueueConsumer({ url: srv.url, session: 'b4', wait: 0 });
  for await (const entry of consumer) {
    if (entry.queue_seq >= 2) {
      await consumer.ack(entry.queue_seq);
      break;
    }
  }
  t.equal(await committed('b4'), 2, 'acknowledged through 2, and no further');

  // manual: leaving acknowledges nothing
  await results(producer, 'b5', 1, 3);
  for await (const entry of new QueueConsumer({ url: srv.url, session: 'b5', wait: 0, ack: 'manual' })) if (entry.queue_seq === 3) break;
  t.equal(await committed('b5'), 0, 'ack: manual leaves the cursor alone');
});

t.test('manual acks: nothing is committed until ack, which is monotonic', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  await results(producer, 'q2', 1, 3);
  const consumer = new QueueConsumer({ url: srv.url, session: 'q2', ack: 'manual', wait: 0 });
  const batch = await consumer.read();
  t.same(batch.entries.map((e) => e.queue_seq), [1, 2, 3]);
  t.equal((await consumer.read(0)).entries.length, 0, 'the position moved on without an ack');
  t.equal((await srv.get('/v1/sessions/q2/queue')).json.committed, 0);
  t.equal(await consumer.ack(2), 2);
  t.equal(await consumer.ack(1), 2, 'a lower ack changes nothing');
});

t.test('a long-poll wakes on a new entry, and close() ends the loop', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  const consumer = new QueueConsumer({ url: srv.url, session: 'q3', wait: 20 });
  const got: QueueEntry[] = [];
  const loop = (async () => {
    for await (const entry of consumer) got.push(entry);
  })();
  await sleep(200);
  await results(producer, 'q3', 1, 1);
  await until(() => got.length === 1, 'the entry', 3_000);
  const started = Date.now();
  consumer.close();
  await loop;
  t.ok(Date.now() - started < 2_000, 'close() did not wait for the 20 s poll');
  t.equal(got[0]?.call_id, 'c1');
});

t.test('across a server restart: nothing acknowledged again, nothing lost', async (t) => {
  const server = await restartableServer(t);
  const producer = new Producer({ url: server.url, backoff: FAST, retries: 30 });
  await results(producer, 'q4', 1, 3);
  const consumer = new QueueConsumer({ url: server.url, session: 'q4', limit: 2, wait: 2, backoff: FAST, retries: 30 });
  const seen: number[] = [];
  const loop = (async () => {
    for await (const entry of consumer) {
      seen.push(entry.queue_seq);
      if (seen.length === 8) break;
    }
  })();
  await until(() => seen.length === 3, 'the first three');
  await server.restart(300);
  await results(producer, 'q4', 4, 8);
  await loop;
  t.same(seen, [1, 2, 3, 4, 5, 6, 7, 8], 'each entry once, in order');
  const queue = (await server.api.get('/v1/sessions/q4/queue')).json;
  t.ok(queue.committed >= 6, `committed ${queue.committed}: the batches the loop moved past`);
  await server.restart();
  const again = new QueueConsumer({ url: server.url, session: 'q4', wait: 0 });
  const rest = (await again.read()).entries.map((e) => e.queue_seq);
  t.same(rest, [...Array(8 - queue.committed).keys()].map((k) => queue.committed + 1 + k), 'after a restart only what was not acknowledged');
});

/** Requests the server answered on a session queue's read route, from its own metrics. */
async function queueReads(srv: { get(path: string): Promise<{ text: string }> }): Promise<number> {
  const text = (await srv.get('/metrics')).text;
  return [...text.matchAll(/^horologium_http_requests_total\{route="\/v1\/sessions\/:session\/queue",method="GET",status="200"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

t.test('an idle consumer with wait 0 backs off (at most 10 reads a second) and wakes for a new entry (issue 44, part 3)', async (t) => {
  const srv = await startServer(t);
  const consumer = new QueueConsumer({ url: srv.url, session: 'idle1', wait: 0 });
  const seen: number[] = [];
  const loop = (async () => {
    for await (const entry of consumer) seen.push(entry.queue_seq);
  })();
  const before = await queueReads(srv);
  await sleep(3000);
  const reads = (await queueReads(srv)) - before;
  t.ok(reads > 0 && reads <= 30, `${reads} reads in 3 s on an empty queue (at most 10 a second)`);
  await results(new Producer({ url: srv.url }), 'idle1', 1, 1);
  await until(() => seen.length === 1, 'the new entry arrives within the longest pause', 5000);
  consumer.close();
  await loop;
  t.same(seen, [1]);
});

t.test('stopWhenEmpty: the loop ends by itself once the queue is drained, every entry acknowledged', async (t) => {
  const srv = await startServer(t);
  await results(new Producer({ url: srv.url }), 'drain1', 1, 3);
  const seen: number[] = [];
  for await (const entry of new QueueConsumer({ url: srv.url, session: 'drain1', wait: 0, stopWhenEmpty: true })) seen.push(entry.queue_seq);
  t.same(seen, [1, 2, 3]);
  t.equal((await srv.get('/v1/sessions/drain1/queue')).json.committed, 3, 'all three acknowledged');
  const none: number[] = [];
  for await (const entry of new QueueConsumer({ url: srv.url, session: 'drain1', wait: 0, stopWhenEmpty: true })) none.push(entry.queue_seq);
  t.same(none, [], 'a drained queue: the loop ends at once');
});
