/**
 * The producer SDK (horologium/producer) against real servers: what it posts, raw JSON kept byte
 * for byte, `track`, retries through a restart and a lost reply (each call stored exactly once),
 * 429 with Retry-After, 409, timeouts and a second URL.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { CallIdConflictError, HorologiumRequestError, Producer, rawJson } from '../../src/producer/index.js';
import { freePort, listening } from '../helpers/process.js';
import { restartableServer, startServer } from '../helpers/server.js';

const FAST = { initialMs: 20, maxMs: 200 };

t.test('posts a call, its result and an event; the queue holds the result', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  const call = await producer.toolCall('p1', { call_id: 'c1', name: 'grep', args: { q: 'x' } });
  t.same(call, { call_id: 'c1', event_seq: 1, duplicate: false });
  const generated = await producer.toolCall('p1', { name: 'ls' });
  t.match(generated.call_id, /^[0-9a-f-]{36}$/, 'a call_id is generated when omitted');
  const result = await producer.toolResult('p1', { call_id: 'c1', name: 'grep', result: { content: 'found' }, execution_time: 0.5 });
  t.same(result, { call_id: 'c1', queue_seq: 1, event_seq: 3, duplicate: false });
  t.same(await producer.event('p1', { type: 'progress', data: { step: 1 } }), { event_seq: 4, duplicate: false });
  const queue = (await srv.get('/v1/sessions/p1/queue')).json;
  t.equal(queue.entries[0].message.content, '{"content":"found"}');
  t.equal(queue.entries[0].execution_time, 0.5);
  const again = await producer.toolResult('p1', { call_id: 'c1', name: 'grep', result: { content: 'found' } });
  t.same(again, { call_id: 'c1', queue_seq: 1, event_seq: 3, duplicate: true }, 'the same result again is a duplicate');
});

t.test('rawJson is sent as its text: big integers, integer-like keys, -0 and 1.0 survive', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  // Already in the form the server writes (section 2's JSON text), so it must come back unchanged.
  const text = '{"b":1,"2":[12345678901234567890,-0,1.0,1e3],"a":"é\\n"}';
  const args = '{"id":98765432109876543210}';
  await producer.toolResult('p2', { call_id: 'c', name: 'calc', result: rawJson(text), args: rawJson(args) });
  const reply = await srv.get('/v1/sessions/p2/queue');
  t.equal(reply.json.entries[0].message.content, text, 'message.content is the text given');
  t.ok(reply.text.includes(`"args":${args}`), 'args kept byte for byte');
  const event = await producer.event('p2', { type: 'note', data: rawJson('{"n":12345678901234567890}') });
  const events = await srv.get('/v1/sessions/p2/events');
  t.ok(events.text.includes('"n":12345678901234567890'), `event ${event.event_seq} keeps its digits`);
});

t.test('an 8 MiB result is posted and kept whole', async (t) => {
  const srv = await startServer(t, { bodyLimit: 16 * 1024 * 1024 });
  const producer = new Producer({ url: srv.url });
  const content = 'x'.repeat(8 * 1024 * 1024);
  const text = `{"content":"${content}"}`;
  const reply = await producer.toolResult('p3', { call_id: 'big', name: 'read', result: rawJson(text) });
  t.equal(reply.duplicate, false);
  const queue = (await srv.get('/v1/sessions/p3/queue')).json;
  t.equal(queue.entries[0].message.content.length, text.length);
  t.ok(queue.entries[0].message.content === text, 'byte for byte');
});

t.test('track posts the call, runs fn once, and posts its value or its error with the time taken', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  let runs = 0;
  const value = await producer.track('p4', 'sleep', { ms: 50 }, async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 50));
    return { slept: 50 };
  });
  t.same(value, { slept: 50 });
  t.equal(runs, 1);
  const boom = new Error('boom');
  await t.rejects(
    producer.track('p4', 'fail', null, () => {
      throw boom;
    }),
    boom,
    'the error is rethrown as it was',
  );
  const queue = (await srv.get('/v1/sessions/p4/queue')).json;
  t.equal(queue.entries.length, 2);
  const [ok, failed] = queue.entries;
  t.equal(ok.message.content, '{"slept":50}');
  t.ok(ok.execution_time >= 0.05 && ok.execution_time < 5, `execution_time ${ok.execution_time} s measured`);
  t.same(ok.args, { ms: 50 });
  t.equal(failed.is_error, true);
  t.equal(failed.message.content, '{"error":"boom"}');
  const events = (await srv.get('/v1/sessions/p4/events')).json.events.map((e: { result: { type: string } }) => e.result.type);
  t.same(events, ['tool_starting', 'tool_completed', 'tool_starting', 'tool_completed']);
});

t.test('through a server restart, every track completes exactly once in the queue', async (t) => {
  const server = await restartableServer(t);
  const producer = new Producer({ url: server.url, backoff: FAST, retries: 30 });
  const runs = new Map<number, number>();
  const tracks: Array<Promise<unknown>> = [];
  let restarted: Promise<void> | undefined;
  for (let k = 0; k < 40; k++) {
    tracks.push(
      producer.track('p5', 'step', { k }, async () => {
        runs.set(k, (runs.get(k) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 5));
        return { k };
      }),
    );
    if (k === 15) restarted = server.restart(400);
    await new Promise((r) => setTimeout(r, 10));
  }
  await restarted;
  await Promise.all(tracks);
  const queue = (await server.api.get('/v1/sessions/p5/queue?limit=1000')).json;
  const ks = queue.entries.map((e: { result: { k: number } }) => e.result.k).sort((a: number, b: number) => a - b);
  t.same(ks, [...Array(40).keys()], 'each of the 40 results once');
  t.same([...runs.values()].filter((n) => n !== 1), [], 'each fn ran once');
});

/** A proxy to `upstream` that cuts the connection of the first request to a path ending in `suffix`, after the server has answered it. */
async function replyLosingProxy(t: Test, upstreamUrl: string, suffix: string): Promise<{ url: string; dropped: () => number }> {
  const upstream = new URL(upstreamUrl);
  let dropped = 0;
  const proxy = createServer((req, res) => {
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      if (req.url?.endsWith(suffix) && dropped++ === 0) {
        up.resume();
        up.on('end', () => res.socket?.destroy());
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(forward);
  });
  return { url: await listening(t, proxy), dropped: () => dropped };
}

t.test('a reply lost after the commit: the retry is answered as a duplicate, stored once', async (t) => {
  const srv = await startServer(t);
  const proxy = await replyLosingProxy(t, srv.url, '/tool-results');
  const retries: string[] = [];
  const producer = new Producer({ url: proxy.url, backoff: FAST, onRetry: (r) => retries.push(r.reason) });
  const reply = await producer.toolResult('p6', { call_id: 'once', name: 'grep', result: { n: 1 } });
  t.equal(proxy.dropped(), 2, 'the first reply was lost, the second went through');
  t.equal(retries.length, 1);
  t.same(reply, { call_id: 'once', queue_seq: 1, event_seq: 1, duplicate: true }, 'the retry found the first write');
  t.equal((await srv.get('/v1/sessions/p6/queue')).json.entries.length, 1, 'stored once');
});

t.test('an event whose reply was lost is stored once: the SDK retries it under the same event_id', async (t) => {
  const srv = await startServer(t);
  const proxy = await replyLosingProxy(t, srv.url, '/events');
  const producer = new Producer({ url: proxy.url, backoff: FAST });
  const reply = await producer.event('p7', { type: 'progress', data: { step: 1 } });
  t.equal(proxy.dropped(), 2, 'the first reply was lost, the second went through');
  t.same(reply, { event_seq: 1, duplicate: true }, 'the retry found the first write');
  t.same(await producer.event('p7', { type: 'progress', data: { step: 1 } }), { event_seq: 2, duplicate: false }, 'the same data again without a key is a new event');
  const given = await producer.event('p7', { type: 'progress', data: { step: 2 }, event_id: 'mine' });
  t.same(given, { event_seq: 3, duplicate: false });
  t.same(await producer.event('p7', { type: 'progress', data: { step: 2 }, event_id: 'mine' }), { event_seq: 3, duplicate: true }, 'a caller-given key is kept');
  await t.rejects(producer.event('p7', { type: 'progress', data: { step: 3 }, event_id: 'mine' }), { name: 'HorologiumRequestError', status: 409, code: 'EVENT_ID_CONFLICT' }, 'a clash is surfaced at once');
  const log = (await srv.get('/v1/sessions/p7/events')).json;
  t.same(log.events.map((e: { result: { data: { step: number } } }) => e.result.data.step), [1, 1, 2], 'three events stored, the retried one once');
});

t.test('429 is retried after its Retry-After, and every post lands', async (t) => {
  const tokens = [
    { token: 'producer-token-0123456789', scopes: ['publish' as const], sessions: ['*'] },
    { token: 'reader-token-012345678901', scopes: ['subscribe' as const], sessions: ['*'] },
  ];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 2 });
  const retries: Array<{ delayMs: number; reason: string }> = [];
  const producer = new Producer({ url: srv.url, token: 'producer-token-0123456789', onRetry: (r) => retries.push(r) });
  for (let k = 0; k < 5; k++) await producer.event('p7', { type: 'n', data: { k } });
  const limited = retries.filter((r) => r.reason.includes('429 RATE_LIMITED'));
  t.ok(limited.length >= 1, `${limited.length} posts were rate limited and retried`);
  t.ok(limited.every((r) => r.delayMs > 0 && r.delayMs <= 1000 && r.delayMs % 1000 === 0), `waited as Retry-After said: ${limited.map((r) => r.delayMs)}`);
  const events = await srv.get('/v1/sessions/p7/events', { authorization: 'Bearer reader-token-012345678901' });
  t.same(events.json.events.map((e: { result: { data: { k: number } } }) => e.result.data.k), [0, 1, 2, 3, 4], 'all five, once each');
  t.equal(retries.length, limited.length, 'nothing else was retried');
});

t.test('409 CALL_ID_CONFLICT is surfaced at once, not retried', async (t) => {
  const srv = await startServer(t);
  const retries: string[] = [];
  const producer = new Producer({ url: srv.url, onRetry: (r) => retries.push(r.reason) });
  await producer.toolResult('p8', { call_id: 'dup', name: 'grep', result: 1 });
  const err = await producer.toolResult('p8', { call_id: 'dup', name: 'grep', result: 2 }).catch((e: unknown) => e);
  t.ok(err instanceof CallIdConflictError, 'a CallIdConflictError');
  t.equal((err as CallIdConflictError).status, 409);
  t.equal((err as CallIdConflictError).code, 'CALL_ID_CONFLICT');
  t.equal((err as CallIdConflictError).callId, 'dup');
  t.match((err as Error).message, /dup/);
  t.same(retries, []);
  const bad = await producer.event('p8', { type: 'Not A Type', data: {} }).catch((e: unknown) => e);
  t.ok(bad instanceof HorologiumRequestError && bad.status === 400, 'a 400 is an error with its code');
  t.same(retries, [], 'and is not retried');
});

t.test('a server that never answers times out, and is retried up to the limit', async (t) => {
  const silent = createServer(() => undefined);
  const url = await listening(t, silent);
  const retries: string[] = [];
  const producer = new Producer({ url, timeoutMs: 150, retries: 2, backoff: FAST, onRetry: (r) => retries.push(r.reason) });
  const started = Date.now();
  const err = await producer.event('p9', { type: 'n', data: {} }).catch((e: unknown) => e);
  t.ok(err instanceof HorologiumRequestError && err.code === 'TIMEOUT', 'TIMEOUT');
  t.equal(retries.length, 2);
  t.ok(Date.now() - started >= 450, 'three attempts of 150 ms');
  silent.closeAllConnections();
});

t.test('a connection error moves on to the next URL', async (t) => {
  const srv = await startServer(t);
  const dead = `http://127.0.0.1:${await freePort()}`;
  const retries: Array<{ url: string; reason: string }> = [];
  const producer = new Producer({ url: [dead, srv.url], backoff: FAST, onRetry: (r) => retries.push(r) });
  t.same(await producer.event('p10', { type: 'n', data: {} }), { event_seq: 1, duplicate: false });
  t.equal(retries.length, 1);
  t.equal(retries[0]?.url, dead);
  t.match(retries[0]?.reason, /ECONNREFUSED/);
});
