/**
 * Server-Sent Events (docs/protocol.md section 10) with a real EventSource client (the
 * `eventsource` package, which reconnects by itself with Last-Event-ID), and raw HTTP reads.
 */
import { connect as connectTcp } from 'node:net';
import { EventSource } from 'eventsource';
import t from 'tap';
import { restartableServer, startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const event = (k: number) => ({ type: 'note', data: { k } });

/** Reads an SSE response's raw text until `done(text)` holds, then aborts it. */
async function readSse(url: string, headers: Record<string, string>, done: (text: string) => boolean): Promise<{ status: number; type: string | null; text: string }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  let text = '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    abort.abort();
  }
  return { status: res.status, type: res.headers.get('content-type'), text };
}

t.test('subscribed first, then replay and live, each status with id <epoch>:<seq>', async (t) => {
  const srv = await startServer(t, { heartbeatMs: 100 });
  for (let k = 1; k <= 3; k++) await srv.post('/v1/sessions/s1/events', event(k));
  const reading = readSse(`${srv.url}/v1/sessions/s1/sse?since=1`, {}, (text) => text.includes('"seq":4') && text.includes(': 💓'));
  await new Promise((r) => setTimeout(r, 150));
  await srv.post('/v1/sessions/s1/events', event(4));
  const { status, type, text } = await reading;
  t.equal(status, 200);
  t.equal(type, 'text/event-stream; charset=utf-8');
  const records = text.split('\n\n').filter((r) => r !== '' && !r.startsWith(':'));
  const page = (await srv.get('/v1/sessions/s1/events')).json;
  t.same(records[0], `event: subscribed\ndata: ${JSON.stringify({ session: 's1', epoch: page.epoch, head: 3, oldest: 1, recovered: true })}`);
  t.same(
    records.slice(1, 4),
    page.events.slice(1).map((f: any) => `id: ${page.epoch}:${f.result.seq}\nevent: status\ndata: ${JSON.stringify(f)}`),
    'the replay after since, then the live event, each the HTTP replay frame byte for byte',
  );
  t.match(text, /\n: 💓\n\n/, 'heartbeat comments');
});

t.test('Last-Event-ID (both forms) and ?epoch decide where to resume; a foreign epoch is not recovered', async (t) => {
  const srv = await startServer(t);
  for (let k = 1; k <= 4; k++) await srv.post('/v1/sessions/s2/events', event(k));
  const epoch = (await srv.get('/v1/sessions/s2/events')).json.epoch;
  const firstTwo = async (headers: Record<string, string>, query = '') => {
    const { text } = await readSse(`${srv.url}/v1/sessions/s2/sse${query}`, headers, (x) => x.split('\n\n').length > 2);
    return text.split('\n\n').slice(0, 2);
  };
  const [sub, next] = await firstTwo({ 'last-event-id': `${epoch}:2` }, '?since=0');
  t.match(sub, /"recovered":true/, 'Last-Event-ID wins over ?since');
  t.match(next, new RegExp(`^id: ${epoch}:3\n`));
  const [, bare] = await firstTwo({ 'last-event-id': '3' });
  t.match(bare, new RegExp(`^id: ${epoch}:4\n`), 'a bare seq');
  const [foreign, from] = await firstTwo({}, '?since=2&epoch=another');
  t.match(foreign, /"recovered":false/);
  t.match(from, new RegExp(`^id: ${epoch}:1\n`), 'everything retained after an epoch change');
  const bad = await fetch(`${srv.url}/v1/sessions/s2/sse`, { headers: { 'last-event-id': 'x:y' } });
  t.equal(bad.status, 400);
  t.equal(((await bad.json()) as { error: { code: string } }).error.code, 'BAD_REQUEST');
});

t.test('EventSource reconnects after a restart and resumes with Last-Event-ID: no gap, no duplicate', async (t) => {
  const server = await restartableServer(t);
  const { api, port } = server;
  for (let k = 1; k <= 3; k++) await api.post('/v1/sessions/es/events', event(k));
  const seqs: number[] = [];
  const ids: string[] = [];
  const subscribed: any[] = [];
  const es = new EventSource(`http://127.0.0.1:${port}/v1/sessions/es/sse?since=0`);
  t.teardown(() => es.close());
  es.addEventListener('subscribed', (e) => subscribed.push(JSON.parse(e.data)));
  es.addEventListener('status', (e) => {
    seqs.push(JSON.parse(e.data).result.seq);
    ids.push(e.lastEventId);
  });
  await until(() => seqs.length === 3, 'the replay');
  await server.restart();
  for (let k = 4; k <= 6; k++) await api.post('/v1/sessions/es/events', event(k));
  await until(() => seqs.length >= 6 && subscribed.length === 2, 'the events after the restart');
  await new Promise((r) => setTimeout(r, 200));
  t.same(seqs, [1, 2, 3, 4, 5, 6], 'every event exactly once, in order');
  t.equal(subscribed[1].recovered, true, 'resumed where it stopped');
  t.match(ids[5], /:6$/, 'lastEventId is <epoch>:<seq>');
});

t.test('a reader that stops reading is cut; a deleted session ends the stream after unsubscribed', async (t) => {
  const srv = await startServer(t, { maxBufferedBytes: 64 * 1024 });
  const hub = srv.app.horologium.hub;
  await srv.post('/v1/sessions/slow/events', event(0));
  // A client that sends its request and never reads a byte of the answer.
  const { port } = new URL(srv.url);
  const socket = connectTcp({ host: '127.0.0.1', port: Number(port) });
  t.teardown(() => socket.destroy());
  socket.pause();
  socket.write('GET /v1/sessions/slow/sse HTTP/1.1\r\nhost: x\r\n\r\n');
  await until(() => hub.connectionCount === 1, 'the SSE connection');
  const big = { type: 'note', data: { blob: 'x'.repeat(60_000) } };
  let posted = 0;
  while (hub.connectionCount === 1 && posted < 400) {
    t.equal((await srv.post('/v1/sessions/slow/events', big)).status, 202);
    posted++;
  }
  t.equal(hub.connectionCount, 0, `cut after ${posted} events of 60 KB that it did not read`);
  t.ok(posted < 400, 'well before the bound of this test');

  await srv.post('/v1/sessions/gone/events', event(1));
  const reading = readSse(`${srv.url}/v1/sessions/gone/sse?since=0`, {}, () => false);
  await until(() => hub.connectionCount === 1, 'the second SSE connection');
  await fetch(`${srv.url}/v1/sessions/gone`, { method: 'DELETE' });
  const { text } = await reading;
  t.match(text, /\n\nevent: unsubscribed\ndata: \{"session":"gone","reason":"deleted"\}\n\n$/, 'unsubscribed, then the end of the response');
});

t.test('auth: a token by header or ?token=, 401 without', async (t) => {
  const tokens = [{ token: 'sse-subscriber-0123456789', scopes: ['subscribe' as const], sessions: ['mine'] }];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  t.equal((await fetch(`${srv.url}/v1/sessions/mine/sse`)).status, 401);
  t.equal((await fetch(`${srv.url}/v1/sessions/other/sse?token=${tokens[0]!.token}`)).status, 403, 'a session the token does not cover');
  const viaQuery = await readSse(`${srv.url}/v1/sessions/mine/sse?token=${tokens[0]!.token}`, {}, (x) => x.includes('subscribed'));
  t.equal(viaQuery.status, 200);
  const viaHeader = await readSse(`${srv.url}/v1/sessions/mine/sse`, { authorization: `Bearer ${tokens[0]!.token}` }, (x) => x.includes('subscribed'));
  t.equal(viaHeader.status, 200);
});

t.test('a concurrent burst while the replay runs: every seq once, in order', async (t) => {
  const srv = await startServer(t);
  for (let k = 1; k <= 300; k++) await srv.post('/v1/sessions/burst/events', event(k));
  const reading = readSse(`${srv.url}/v1/sessions/burst/sse?since=0`, {}, (text) => text.includes('"seq":600}'));
  // 300 more, many in flight at once, while the replay of the first 300 is being sent.
  await Promise.all(Array.from({ length: 300 }, (_, k) => srv.post('/v1/sessions/burst/events', event(301 + k))));
  const { text } = await reading;
  const seqs = [...text.matchAll(/^id: [^:\n]+:(\d+)$/gm)].map((m) => Number(m[1]));
  t.same(seqs, Array.from({ length: 600 }, (_, k) => k + 1), 'no gap, no duplicate between replay and live');
});

t.test('shutdown ends every SSE response (the client resumes elsewhere)', async (t) => {
  const server = await restartableServer(t);
  await server.api.post('/v1/sessions/bye/events', event(1));
  const reading = readSse(`${server.url}/v1/sessions/bye/sse?since=0`, {}, () => false);
  await new Promise((r) => setTimeout(r, 200));
  const started = Date.now();
  await server.restart();
  const { text } = await reading;
  t.match(text, /event: subscribed/, 'it was streaming');
  t.ok(Date.now() - started < 3000, `the response ended with the shutdown (${Date.now() - started} ms), not at a timeout`);
});
