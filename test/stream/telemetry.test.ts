/**
 * Stream observability (docs/operations.md), read as an operator reads it: the `stream open`,
 * `stream closed` and `stream refused` lines from the real process's stdout, and the stream and
 * auth metrics scraped from its /metrics, for the WebSocket, SSE and AG-UI streams.
 */
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { logLines, spawnServer, type LogLine, type ServerProcess } from '../helpers/process.js';
import { client } from '../helpers/server.js';
import { connect, upgradeOutcome } from '../helpers/ws-client.js';
import { sleep, until } from '../helpers/wait.js';

const ADMIN = 'admin-token-0123456789abcdef';
const READER = 'reader-token-0123456789abcdef';
const PUBLISHER = 'publisher-token-0123456789ab';
const TOKENS = JSON.stringify([
  { token: ADMIN, scopes: ['admin'], sessions: ['*'] },
  { token: READER, scopes: ['subscribe'], sessions: ['obs-*'] },
  { token: PUBLISHER, scopes: ['publish'], sessions: ['*'] },
]);


/** The sample value of `name{labels}` in a scrape, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (wanted.every(([k, v]) => have[k] === v) && Object.keys(have).length === wanted.length) return Number(m[3]);
  }
  return undefined;
}

/** A server's unmasked text frame of `payload` bytes, header included (RFC 6455 5.2). */
const wsFrameLength = (payload: number) => payload + (payload < 126 ? 2 : payload < 65536 ? 4 : 10);

async function start(t: Test, env: Record<string, string> = {}) {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', HOROLOGIUM_TOKENS: TOKENS, HOROLOGIUM_RATE_LIMIT: '0', ...env });
  const api = client(proc.url);
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const scrape = async () => (await api.get('/metrics', auth(ADMIN))).text;
  const post = (session: string, k: number) => api.post(`/v1/sessions/${session}/events`, { type: 'note', data: { k } }, auth(PUBLISHER));
  return { proc, api, auth, scrape, post };
}

const logged = async (proc: ServerProcess, msg: string, pred: (l: LogLine) => boolean = () => true): Promise<LogLine> => {
  let found: LogLine | undefined;
  await until(() => (found = logLines(proc.output()).find((l) => l.msg === msg && pred(l))) !== undefined, `a "${msg}" line`);
  return found as LogLine;
};

t.test('a WebSocket connection: one line at open, one at close with what it carried; gauges and counters follow', async (t) => {
  const { proc, auth, scrape, post } = await start(t);
  for (let k = 1; k <= 3; k++) t.equal((await post('obs-a', k)).status, 202);
  const before = await scrape();
  t.equal(sample(before, 'horologium_stream_connections', { stream: 'ws' }), 0);

  const c = await connect(proc, '?session=obs-a&since=0', auth(READER));
  await c.next((f) => f.method === 'status' && f.result.seq === 3);
  await post('obs-a', 4);
  await c.next((f) => f.method === 'status' && f.result.seq === 4);
  const open = await logged(proc, 'stream open');
  t.match(open, { stream: 'ws', address: '127.0.0.1', principal: /^t:/ });
  t.type(open.reqId, 'string', 'the line carries the upgrade request id');

  const during = await scrape();
  t.equal(sample(during, 'horologium_stream_connections', { stream: 'ws' }), 1, 'one open connection');
  t.equal(sample(during, 'horologium_stream_subscriptions', { stream: 'ws' }), 1, 'with one subscription');
  t.equal(sample(during, 'horologium_stream_replay_events_total', { stream: 'ws' }), 3, 'three events replayed from the store');
  const frames = sample(during, 'horologium_stream_frames_sent_total', { stream: 'ws' });
  t.equal(frames, 5, 'subscribed, three replayed, one live (heartbeats are not counted)');
  const wireBytes = c.texts.filter((x) => x !== '💓').reduce((n, x) => n + wsFrameLength(Buffer.byteLength(x)), 0);
  t.equal(sample(during, 'horologium_stream_bytes_sent_total', { stream: 'ws' }), wireBytes, 'bytes as framed on the wire');

  c.ws.close(1000, 'bye');
  await c.closed;
  const closed = await logged(proc, 'stream closed');
  t.match(closed, {
    stream: 'ws',
    address: '127.0.0.1',
    principal: open.principal,
    sessions: ['obs-a'],
    subscribes: 1,
    frames: 5,
    bytes: wireBytes,
    replayed: 3,
    code: 1000,
    reason: 'bye',
  });
  t.equal(closed.reqId, open.reqId, 'both lines carry the same request id');
  t.type(closed.duration_ms, 'number');
  t.notOk(proc.output().includes(READER), 'the token is never logged');

  const after = await scrape();
  t.equal(sample(after, 'horologium_stream_connections', { stream: 'ws' }), 0);
  t.equal(sample(after, 'horologium_stream_subscriptions', { stream: 'ws' }), 0);
  t.equal(sample(after, 'horologium_stream_closes_total', { stream: 'ws', code: '1000' }), 1);
});

t.test('auth failures: refused upgrades, 4001 and 4003 closes, a FORBIDDEN subscribe and HTTP 401/403, counted by surface and kind', async (t) => {
  const { proc, api, auth, scrape } = await start(t);
  t.equal(await upgradeOutcome(proc, '?token=not-a-token-of-this-server'), 401);
  const refused = await logged(proc, 'stream refused');
  t.match(refused, { stream: 'ws', address: '127.0.0.1', status: 401, code: 'UNAUTHORIZED' });
  t.notOk(proc.output().includes('not-a-token-of-this-server'), 'nor is a refused token');

  // No token at the upgrade: the first message must be auth.
  const wrongFirst = await connect(proc);
  wrongFirst.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'obs-b' } }));
  t.equal((await wrongFirst.closed).code, 4001);
  const badToken = await connect(proc);
  badToken.ws.send(JSON.stringify({ method: 'auth', params: { token: 'x'.repeat(40) } }));
  t.equal((await badToken.closed).code, 4001);
  const noScope = await connect(proc);
  noScope.ws.send(JSON.stringify({ method: 'auth', params: { token: PUBLISHER } }));
  t.equal((await noScope.closed).code, 4003);
  const narrow = await connect(proc, '', auth(READER));
  narrow.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'elsewhere' } }));
  t.equal((await narrow.next((f) => f.method === 'error')).result.code, 'FORBIDDEN');
  narrow.ws.close();
  await narrow.closed;

  t.equal((await api.get('/v1/sessions/obs-b/events')).status, 401);
  t.equal((await api.get('/v1/sessions/obs-b/events', { authorization: 'Basic abc' })).status, 401);
  t.equal((await api.get('/v1/sessions/elsewhere/events', auth(READER))).status, 403);

  const closes = await until(() => logLines(proc.output()).filter((l) => l.msg === 'stream closed').length === 4, 'four close lines').then(() =>
    logLines(proc.output()).filter((l) => l.msg === 'stream closed'),
  );
  t.same(
    closes.map((l) => `${l.code} ${l.reason}`).sort(),
    ['1005 ', '4001 the first message must be auth', '4001 the token is not valid', '4003 the token lacks the subscribe scope'],
    'each close line has the code and the reason (1005: the client closed without a code)',
  );
  t.match(closes.find((l) => l.code === 4003), { principal: null }, 'a refused token gives no principal');

  const m = await scrape();
  const failures = (surface: string, kind: string) => sample(m, 'horologium_auth_failures_total', { surface, kind });
  t.equal(failures('ws', 'invalid'), 2, 'the refused upgrade and the refused auth message');
  t.equal(failures('ws', 'missing'), 1);
  t.equal(failures('ws', 'forbidden'), 2, 'the token without the scope, the session it does not cover');
  t.equal(failures('http', 'missing'), 1);
  t.equal(failures('http', 'malformed'), 1);
  t.equal(failures('http', 'forbidden'), 1);
  t.equal(sample(m, 'horologium_stream_refused_total', { stream: 'ws', code: 'UNAUTHORIZED' }), 1);
  t.equal(sample(m, 'horologium_stream_closes_total', { stream: 'ws', code: '4001' }), 2);
  t.equal(sample(m, 'horologium_stream_closes_total', { stream: 'ws', code: '4003' }), 1);
});

t.test('a client that stops reading: the close line says 4008 and the slow-consumer counter moves', async (t) => {
  const { proc, auth, scrape } = await start(t, { HOROLOGIUM_MAX_BUFFERED_BYTES: '65536' });
  const slow = await connect(proc, '?session=obs-slow', auth(READER));
  await slow.next((f) => f.method === 'subscribed');
  (slow.ws as any)._socket.pause();
  // Enough to overflow the kernel's loopback buffers as well as the 64 KiB limit.
  const big = 'y'.repeat(32 * 1024);
  const api = client(proc.url);
  for (let k = 1; k <= 400; k++) await api.post('/v1/sessions/obs-slow/events', { type: 'note', data: { k, big } }, auth(PUBLISHER));
  (slow.ws as any)._socket.resume();
  t.equal((await slow.closed).code, 4008);
  const closed = await logged(proc, 'stream closed');
  t.match(closed, { stream: 'ws', code: 4008, reason: 'slow consumer', sessions: ['obs-slow'] });
  t.ok(closed.frames > 1 && closed.bytes > 64 * 1024, 'what it was sent before it fell behind');
  const m = await scrape();
  t.equal(sample(m, 'horologium_stream_slow_consumer_closes_total', { stream: 'ws' }), 1);
  t.equal(sample(m, 'horologium_stream_closes_total', { stream: 'ws', code: '4008' }), 1);
});

t.test('SSE and AG-UI streams: open and close lines, gauges, frames, refusals', async (t) => {
  const { proc, api, auth, scrape, post } = await start(t);
  for (let k = 1; k <= 2; k++) await post('obs-sse', k);
  const controller = new AbortController();
  const res = await fetch(`${proc.url}/v1/sessions/obs-sse/sse?since=0`, { headers: auth(READER), signal: controller.signal });
  t.equal(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let received = '';
  while ((received.match(/^id: /gm) ?? []).length < 2) received += new TextDecoder().decode((await reader.read()).value);
  const agui = await fetch(`${proc.url}/v1/sessions/obs-sse/ag-ui?token=${READER}`);
  t.equal(agui.status, 200);
  const aguiReader = (agui.body as ReadableStream<Uint8Array>).getReader();
  await aguiReader.read();

  await until(() => logLines(proc.output()).filter((l) => l.msg === 'stream open').length === 2, 'two open lines');
  const opens = logLines(proc.output()).filter((l) => l.msg === 'stream open');
  t.same(opens.map((l) => l.stream).sort(), ['ag_ui', 'sse']);
  t.notOk(proc.output().includes(READER), 'a token in the query string is not logged either');
  const during = await scrape();
  t.equal(sample(during, 'horologium_stream_connections', { stream: 'sse' }), 1);
  t.equal(sample(during, 'horologium_stream_connections', { stream: 'ag_ui' }), 1);
  t.equal(sample(during, 'horologium_stream_subscriptions', { stream: 'sse' }), 1);
  t.equal(sample(during, 'horologium_stream_replay_events_total', { stream: 'sse' }), 2);
  t.ok((sample(during, 'horologium_stream_bytes_sent_total', { stream: 'sse' }) ?? 0) >= Buffer.byteLength(received), 'the bytes read were counted');

  controller.abort();
  await aguiReader.cancel();
  await until(() => logLines(proc.output()).filter((l) => l.msg === 'stream closed').length === 2, 'two close lines');
  const closes = logLines(proc.output()).filter((l) => l.msg === 'stream closed');
  t.match(closes.find((l) => l.stream === 'sse'), { code: 1000, reason: 'the client left', sessions: ['obs-sse'], replayed: 2 });
  t.match(closes.find((l) => l.stream === 'ag_ui'), { code: 1000, reason: 'the client left', sessions: ['obs-sse'] });

  t.equal((await api.get('/v1/sessions/elsewhere/sse', auth(READER))).status, 403);
  t.equal((await api.get('/v1/sessions/obs-sse/ag-ui')).status, 401);
  await sleep(100);
  const m = await scrape();
  t.equal(sample(m, 'horologium_stream_connections', { stream: 'sse' }), 0);
  t.equal(sample(m, 'horologium_stream_closes_total', { stream: 'sse', code: '1000' }), 1);
  t.equal(sample(m, 'horologium_stream_closes_total', { stream: 'ag_ui', code: '1000' }), 1);
  t.equal(sample(m, 'horologium_stream_refused_total', { stream: 'sse', code: 'FORBIDDEN' }), 1);
  t.equal(sample(m, 'horologium_stream_refused_total', { stream: 'ag_ui', code: 'UNAUTHORIZED' }), 1);
  t.equal(sample(m, 'horologium_auth_failures_total', { surface: 'sse', kind: 'forbidden' }), 1);
  t.equal(sample(m, 'horologium_auth_failures_total', { surface: 'ag_ui', kind: 'missing' }), 1);
  t.match(logLines(proc.output()).find((l) => l.msg === 'stream refused' && l.stream === 'sse'), { status: 403, code: 'FORBIDDEN' });
});

t.test('shutdown: open streams are logged closed with 1001', async (t) => {
  const { proc, auth } = await start(t);
  const c = await connect(proc, '?session=obs-bye', auth(READER));
  await c.next((f) => f.method === 'subscribed');
  proc.child.kill('SIGTERM');
  t.equal((await c.closed).code, 1001);
  await proc.exited;
  t.match(logLines(proc.output()).find((l) => l.msg === 'stream closed'), { stream: 'ws', code: 1001, reason: 'server going away' });
  t.equal(WebSocket.CLOSED, c.ws.readyState);
});
