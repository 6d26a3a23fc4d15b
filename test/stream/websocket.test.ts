/** The WebSocket stream with real ws clients against a real listening server (docs/protocol.md §5). */
import t from 'tap';
import WebSocket from 'ws';
import { startServer, type Running } from '../helpers/server.js';
import { connect, upgradeOutcome } from '../helpers/ws-client.js';
import { until } from '../helpers/wait.js';

const post = (srv: Running, session: string, k: number) => srv.post(`/v1/sessions/${session}/events`, { type: 'note', data: { k } });

t.test('subscribe with since: replay then live, exact frames', async (t) => {
  const srv = await startServer(t);
  for (let k = 1; k <= 3; k++) await post(srv, 's1', k);
  const c = await connect(srv);
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 's1', since: 1 } }));
  const sub = await c.next();
  t.match(sub, { method: 'subscribed', result: { session: 's1', head: 3, oldest: 1, recovered: true } });
  t.type(sub.result.epoch, 'string');
  const replayed = [await c.next(), await c.next()];
  t.same(replayed.map((f) => f.result.seq), [2, 3]);
  await post(srv, 's1', 4);
  const live = await c.next();
  t.match(live, { method: 'status', result: { type: 'note', data: { k: 4 }, session: 's1', seq: 4 } });
  const http = (await srv.get('/v1/sessions/s1/events?after=3')).text;
  t.ok(http.includes(c.texts[c.texts.length - 1]!), 'the same bytes over HTTP replay and the socket');
});

t.test('a producer posting fast while a client subscribes with since=0: every seq once, in order', async (t) => {
  const srv = await startServer(t, { historySize: 10_000 });
  const total = 400;
  let posted = 0;
  const producer = (async () => {
    const inflight: Promise<unknown>[] = [];
    for (let k = 1; k <= total; k++) {
      inflight.push(post(srv, 'race', k).then(() => posted++));
      if (inflight.length >= 8) await inflight.shift();
    }
    await Promise.all(inflight);
  })();
  while (posted < total / 3) await new Promise((r) => setTimeout(r, 5));
  const c = await connect(srv, '?session=race&since=0');
  t.teardown(() => c.ws.close());
  await producer;
  const seqs: number[] = [];
  await c.next((f) => f.method === 'subscribed');
  while (seqs.length < total) seqs.push((await c.next((f) => f.method === 'status')).result.seq);
  t.same(seqs, Array.from({ length: total }, (_, k) => k + 1));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(c.frames.filter((f) => f.method === 'status').length, total, 'no duplicate afterwards');
});

t.test('recovered: false when since is older than retained or the epoch differs', async (t) => {
  const srv = await startServer(t, { historySize: 3 });
  for (let k = 1; k <= 6; k++) await post(srv, 'h', k);
  const c = await connect(srv);
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'h', since: 1 } }));
  t.match(await c.next(), { result: { recovered: false, oldest: 4, head: 6 } });
  t.same([(await c.next()).result.seq, (await c.next()).result.seq, (await c.next()).result.seq], [4, 5, 6]);
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'h', since: 5, epoch: 'other' } }));
  t.match(await c.next((f) => f.method === 'subscribed'), { result: { recovered: false } });
  t.equal((await c.next()).result.seq, 4, 'replay starts at the oldest retained');
});

t.test('live only, unsubscribe, errors keep the connection open', async (t) => {
  const srv = await startServer(t);
  await post(srv, 'a', 1);
  const c = await connect(srv);
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'a' } }));
  t.match(await c.next(), { method: 'subscribed', result: { head: 1, recovered: true } });
  c.ws.send('not json');
  t.match(await c.next(), { method: 'error', result: { code: 'INVALID_JSON' } });
  c.ws.send(JSON.stringify({ method: 'dance' }));
  t.match(await c.next(), { method: 'error', result: { code: 'UNKNOWN_METHOD' } });
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: '-bad' } }));
  t.match(await c.next(), { method: 'error', result: { code: 'INVALID_MESSAGE' } });
  c.ws.send('💓');
  await post(srv, 'a', 2);
  t.match(await c.next(), { method: 'status', result: { seq: 2 } });
  c.ws.send(JSON.stringify({ method: 'unsubscribe', params: { session: 'a' } }));
  t.same(await c.next(), { method: 'unsubscribed', result: { session: 'a' } });
  await post(srv, 'a', 3);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(c.frames.filter((f) => f.method === 'status').length, 1, 'nothing after unsubscribe');
});

t.test('close codes: 1003 binary, 1009 oversized, 1001 on shutdown', async (t) => {
  const srv = await startServer(t);
  const a = await connect(srv);
  a.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  t.equal((await a.closed).code, 1003);
  const b = await connect(srv);
  b.ws.send('x'.repeat(70 * 1024));
  t.equal((await b.closed).code, 1009);
  const c = await connect(srv, '?session=z');
  await c.next();
  await srv.app.close();
  t.equal((await c.closed).code, 1001);
});

t.test('heartbeats: 💓 text frames', async (t) => {
  const srv = await startServer(t, { heartbeatMs: 100 });
  const c = await connect(srv);
  t.teardown(() => c.ws.close());
  await until(() => c.texts.length >= 2, 'two heartbeats');
  t.same(c.texts.slice(0, 2), ['💓', '💓'], 'a connection with no subscription hears only heartbeats');
  t.same(c.frames, [], 'and no JSON frame');
});

t.test('a client that stops reading is closed with 4008; the other subscriber gets everything', async (t) => {
  const srv = await startServer(t, { maxBufferedBytes: 64 * 1024 });
  const good = await connect(srv, '?session=bp');
  t.teardown(() => good.ws.close());
  await good.next();
  const slow = await connect(srv, '?session=bp');
  await slow.next();
  (slow.ws as any)._socket.pause();
  // Enough to overflow the kernel's loopback buffers as well as the 64 KiB limit.
  const big = 'y'.repeat(32 * 1024);
  const total = 400;
  const seqs: number[] = [];
  for (let k = 1; k <= total; k++) {
    await srv.post('/v1/sessions/bp/events', { type: 'note', data: { k, big } });
    seqs.push((await good.next((f) => f.method === 'status')).result.seq);
  }
  t.same(seqs, Array.from({ length: total }, (_, k) => k + 1), 'the reading subscriber is not slowed or cut');
  const serverSides = [...(srv.app as any).websocketServer.clients] as WebSocket[];
  t.same(serverSides.map((w) => w.readyState).sort(), [WebSocket.OPEN, WebSocket.CLOSING], 'the server is closing the stalled one only');
  (slow.ws as any)._socket.resume();
  t.equal((await slow.closed).code, 4008);
});

t.test('a peer that answers no ping is dropped within two intervals', async (t) => {
  const srv = await startServer(t, { heartbeatMs: 100 });
  const c = await connect(srv);
  t.teardown(() => c.ws.terminate());
  const clients = (srv.app as any).websocketServer.clients as Set<WebSocket>;
  t.equal(clients.size, 1);
  (c.ws as any)._socket.pause();
  await new Promise((r) => setTimeout(r, 600));
  t.equal(clients.size, 0, 'terminated by the server');
});

t.test('SIGTERM: connected clients get 1001 before the process exits', async (t) => {
  const { spawnServer } = await import('../helpers/process.js');
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const ws = new WebSocket(`${proc.url.replace('http', 'ws')}/v1/stream?session=x`);
  await new Promise((r) => ws.once('message', r));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  proc.child.kill('SIGTERM');
  t.equal(await closed, 1001);
  t.equal((await proc.exited).code, 0);
});

t.test('a malformed subscription on the upgrade URL refuses the upgrade with 400', async (t) => {
  const srv = await startServer(t);
  t.equal(await upgradeOutcome(srv, '?session=s1&since=abc'), 400, 'since that is not a whole number');
  t.equal(await upgradeOutcome(srv, '?session=no%20spaces'), 400, 'a session id outside the pattern');
  t.equal(await upgradeOutcome(srv, '?since=3'), 400, 'since without a session');
  t.equal(await upgradeOutcome(srv, '?session=s1&since=3&epoch=e1'), 'open', 'a well-formed one opens');
});

t.test('GET /v1/stream without an upgrade is 426 with the envelope', async (t) => {
  const srv = await startServer(t);
  const r = await srv.get('/v1/stream');
  t.equal(r.status, 426);
  t.equal(r.json.error.code, 'UPGRADE_REQUIRED');
  t.match(r.json.error.message, /Upgrade: websocket/);
  t.equal(r.headers.get('upgrade'), 'websocket');
});
