/**
 * The hostile-input suite: thousands of generated requests and WebSocket messages against a real
 * listening server with auth on and a real SQLite file. Every case must get a 4xx/2xx (never a
 * 5xx), every error must be the section 4 envelope without a stack trace or a path, every rejected
 * request must leave the store as it was, and every socket must end, if it ends, with a section 5
 * close code. The cases come from a seeded generator (HOSTILE_SEED to replay another run).
 */
import { isUtf8 } from 'node:buffer';
import { Agent, request } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import t from 'tap';
import WebSocket from 'ws';
import { testConfig } from '../helpers/config.js';
import { startServer, type Running } from '../helpers/server.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20261203);
const ADMIN = 'hostile-admin-token-0123456789';
const AUTH = { authorization: `Bearer ${ADMIN}` };
const SESSIONS = ['h1', 'h2', 'h3'];

/** mulberry32: small, seedable, good enough to pick mutations. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)] as T };
}
const rnd = prng(SEED);

interface RawReply {
  status: number;
  text: string;
  contentType: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function raw(srv: Running, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<RawReply> {
  const url = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), contentType: String(res.headers['content-type'] ?? '') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Heads of the sessions the cases write to, and the store's queue depth: what "unchanged" means. */
async function snapshot(srv: Running): Promise<string> {
  const store = srv.app.horologium.store;
  const parts = await Promise.all(
    SESSIONS.map(async (s) => {
      const [events, queue] = await Promise.all([store.readEvents(s, 0, 0), store.readQueue(s, 0, 0)]);
      return `${s}:${events.head}/${queue.head}/${queue.committed}`;
    }),
  );
  return `${parts.join(',')};depth=${await store.queueDepth()}`;
}

const LEAK = /\n\s+at |node_modules|[/\\]src[/\\]|\.ts:\d|\/(home|work|tmp|usr)\//;

/** What each reply must be; returns the problem, or undefined. */
function problem(reply: RawReply, method: string): string | undefined {
  if (reply.status >= 500) return `status ${reply.status}: ${reply.text.slice(0, 200)}`;
  // A reply to HEAD has no body, by definition.
  if (reply.status < 400 || method === 'HEAD') return undefined;
  if (!reply.contentType.startsWith('application/json')) return `content-type ${reply.contentType}`;
  let body: any;
  try {
    body = JSON.parse(reply.text);
  } catch {
    return `not JSON: ${reply.text.slice(0, 200)}`;
  }
  const e = body?.error;
  if (Object.keys(body ?? {}).join() !== 'error' || Object.keys(e ?? {}).sort().join() !== 'code,details,message') return `not the envelope: ${reply.text.slice(0, 200)}`;
  if (!/^[A-Z][A-Z_]*$/.test(e.code) || typeof e.message !== 'string' || e.message.length === 0 || !Array.isArray(e.details)) return `bad envelope fields: ${reply.text.slice(0, 200)}`;
  if (LEAK.test(reply.text)) return `leaks internals: ${reply.text.slice(0, 200)}`;
  return undefined;
}

interface Case {
  kind: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** When set, the status the case must get. */
  expect?: number;
}

// ---- case generators ------------------------------------------------------------------------

let unique = 0;
const validBodies = () => {
  const k = ++unique;
  return [
    { path: '/v1/sessions/h1/tool-calls', text: `{"call_id":"c${k}","name":"grep","args":{"q":"x","n":12345678901234567890}}` },
    { path: '/v1/sessions/h2/tool-results', text: `{"call_id":"r${k}","name":"grep","result":{"content":"hi ${k}","1":2},"args":{"q":1},"execution_time":0.5,"is_error":false}` },
    { path: '/v1/sessions/h3/events', text: `{"type":"note","data":{"k":${k},"s":"é\\u00e9"}}` },
    { path: '/v1/sessions/h1/queue/ack', text: `{"through":0}` },
  ];
};

const PALETTE = ['{', '}', '[', ']', '"', '\\', ',', ':', '\u0000', '\u001f', 'e', '-', '.', '0', 'null', 'true', '\ud800', '💓', '\\u', '\\ud800', ' '];

function mutate(text: string): Buffer {
  let bytes = Buffer.from(text);
  for (let m = 0, n = 1 + rnd.int(3); m < n; m++) {
    const at = rnd.int(bytes.length + 1);
    switch (rnd.int(7)) {
      case 0:
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
        break;
      case 1:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(rnd.pick(PALETTE)), bytes.subarray(at)]);
        break;
      case 2:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([rnd.int(256)]), bytes.subarray(at + 1)]);
        break;
      case 3:
        bytes = bytes.subarray(0, at);
        break;
      case 4: {
        const from = rnd.int(bytes.length + 1);
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(at, from), Math.max(at, from)), bytes.subarray(at)]);
        break;
      }
      case 5: {
        const b = rnd.int(bytes.length + 1);
        const copy = Buffer.from(bytes);
        if (at < copy.length && b < copy.length) [copy[at], copy[b]] = [copy[b] as number, copy[at] as number];
        bytes = copy;
        break;
      }
      default:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(JSON.stringify(rnd.pick(['__proto__', 'constructor', 'x'.repeat(300), -0, 1e400]))), bytes.subarray(at)]);
    }
  }
  return bytes;
}

const HOSTILE_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, '', 'x', [], {}, [1, 'a'], { a: { b: 1 } }, 'x'.repeat(5000), '\u0000', '💓'];
const BODY_FIELDS: Record<string, { path: string; body: Record<string, unknown> }> = {
  'tool-calls': { path: '/v1/sessions/h1/tool-calls', body: { call_id: 'x', name: 'grep', args: { q: 1 } } },
  'tool-results': { path: '/v1/sessions/h2/tool-results', body: { call_id: 'x', name: 'grep', result: 'r', args: {}, execution_time: 0.1, is_error: false } },
  events: { path: '/v1/sessions/h3/events', body: { type: 'note', data: {} } },
  ack: { path: '/v1/sessions/h1/queue/ack', body: { through: 0 } },
};

const INVALID_UTF8 = [[0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xff], [0xf4, 0x90, 0x80, 0x80], [0x80, 0x80]];

function* httpCases(): Generator<Case> {
  // Mutated valid bodies, on every POST route.
  for (let k = 0; k < 3200; k++) {
    const v = rnd.pick(validBodies());
    yield { kind: 'mutated body', method: 'POST', path: v.path, headers: { 'content-type': 'application/json' }, body: mutate(v.text) };
  }
  // Random bytes, with random content types.
  for (let k = 0; k < 400; k++) {
    const bytes = Buffer.from(Array.from({ length: rnd.int(300) }, () => rnd.int(256)));
    const type = rnd.pick(['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '']);
    yield { kind: 'random bytes', method: 'POST', path: rnd.pick(validBodies()).path, headers: type ? { 'content-type': type } : {}, body: bytes };
  }
  // Wrong types and missing fields, field by field.
  for (const [name, { path, body }] of Object.entries(BODY_FIELDS)) {
    for (const field of Object.keys(body)) {
      for (const value of HOSTILE_VALUES) {
        const b: Record<string, unknown> = { ...body, [field]: value };
        if (field === 'call_id') b.call_id = typeof value === 'string' && value.length > 0 && value.length < 257 && !/[\u0000-\u001f]/.test(value) ? `${value}${++unique}` : value;
        yield { kind: `wrong type ${name}.${field}`, method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) };
      }
      const { [field]: _dropped, ...rest } = body;
      yield { kind: `missing ${name}.${field}`, method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(rest) };
    }
    yield { kind: `unknown fields ${name}`, method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, call_id: `u${++unique}`, extra: 1, nested: { deeper: [1] } }) };
  }
  // Invalid UTF-8 and lone surrogates inside strings: accepted, made well-formed (section 3).
  for (let k = 0; k < 300; k++) {
    const bad = Buffer.from(rnd.pick(INVALID_UTF8));
    const escaped = rnd.pick(['\\ud800', '\\udfff', '\\ud83d', '\\ude00\\ud83d', 'ok']);
    const body = Buffer.concat([Buffer.from(`{"call_id":"u8-${++unique}","name":"grep","result":{"content":"a`), bad, Buffer.from(`b${escaped}"},"args":{"k`), bad, Buffer.from(`":1}}`)]);
    yield { kind: 'invalid UTF-8 / lone surrogate', method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body, expect: 202 };
  }
  // Nesting, up to 100,000 and beyond.
  for (const depth of [100, 1000, 10_000, 16_000, 16_384, 16_385, 100_000, 1_000_000]) {
    for (const open of ['[', '{"a":']) {
      const close = open === '[' ? ']' : '}';
      const body = `{"call_id":"deep-${open === '[' ? 'a' : 'o'}-${depth}-${++unique}","name":"n","result":${open.repeat(depth)}1${close.repeat(depth)}}`;
      yield { kind: `nesting ${depth}`, method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body, ...(depth >= 100_000 ? { expect: 400 } : depth <= 10_000 ? { expect: 202 } : {}) };
    }
  }
  // Prototype keys: never pollute, never stand in for a real field.
  for (const key of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
    yield { kind: `proto key ${key} as the envelope`, method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body: `{"${key}":{"call_id":"p","name":"n","result":1,"polluted":true}}`, expect: 400 };
    yield { kind: `proto key ${key} beside the fields`, method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body: `{"call_id":"p-${key}-${++unique}","name":"n","${key}":{"polluted":true},"result":{"${key}":{"polluted":true}},"args":{"${key}":1}}`, expect: 202 };
    yield { kind: `proto key ${key} in event data`, method: 'POST', path: '/v1/sessions/h3/events', headers: { 'content-type': 'application/json' }, body: `{"type":"note","data":{"${key}":{"polluted":true}}}`, expect: 202 };
    yield { kind: `proto key ${key} as the type`, method: 'POST', path: '/v1/sessions/h3/events', headers: { 'content-type': 'application/json' }, body: `{"data":{},"${key}":"note"}`, expect: 400 };
  }
  // Huge bodies, strings, headers, URLs.
  yield { kind: 'body over the limit', method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body: `{"call_id":"big","name":"n","result":"${'x'.repeat(17 * 1024 * 1024)}"}`, expect: 413 };
  yield { kind: 'event data over its limit', method: 'POST', path: '/v1/sessions/h3/events', headers: { 'content-type': 'application/json' }, body: `{"type":"note","data":{"s":"${'x'.repeat(100_000)}"}}`, expect: 413 };
  yield { kind: 'a 4 MiB string, accepted whole', method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body: `{"call_id":"huge-${++unique}","name":"n","result":"${'y'.repeat(4 * 1024 * 1024)}"}`, expect: 202 };
  yield { kind: 'huge header', method: 'GET', path: '/v1/sessions/h1/events', headers: { 'x-junk': 'j'.repeat(20_000) }, expect: 431 };
  yield { kind: 'many headers', method: 'GET', path: '/v1/sessions/h1/events', headers: Object.fromEntries(Array.from({ length: 3000 }, (_, k) => [`x-h${k}`, 'v'])) };
  yield { kind: 'huge URL', method: 'GET', path: `/v1/sessions/${'s'.repeat(100_000)}/events`, headers: {} };
  yield { kind: 'session id too long', method: 'GET', path: `/v1/sessions/${'s'.repeat(129)}/events`, headers: {}, expect: 400 };
  yield { kind: 'huge call_id', method: 'POST', path: '/v1/sessions/h2/tool-results', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ call_id: 'c'.repeat(300), name: 'n', result: 1 }), expect: 400 };
  // Content types, methods, paths, queries, credentials.
  for (const type of ['text/plain', 'application/xml', 'application/json-patch+json', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json, text/plain', ';;;', 'application/json; boundary="', 'x'.repeat(2000)]) {
    yield { kind: `content-type ${type.slice(0, 40)}`, method: 'POST', path: '/v1/sessions/h3/events', headers: { 'content-type': type }, body: '{"type":"note","data":{}}' };
  }
  for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE']) {
    for (const path of ['/v1/sessions/h1/events', '/v1/sessions/h1/tool-results', '/v1/stream', '/metrics']) yield { kind: `method ${method}`, method, path, headers: {} };
  }
  for (let k = 0; k < 200; k++) {
    const junk = Array.from({ length: 1 + rnd.int(40) }, () => rnd.pick(['%', '%00', '%ff', '%2e%2e', '..', '/', '?', '#', 'é', '\u202e', 'a', ':', '*', '%zz', ';', '&', '=', 'v1', 'sessions'])).join('');
    yield { kind: 'random path', method: rnd.pick(['GET', 'POST']), path: `/v1/sessions/${encodeURI(junk).replace(/%25/g, '%')}/${rnd.pick(['events', 'queue', 'tool-results', 'x'])}`, headers: { 'content-type': 'application/json' }, body: '{}' };
  }
  for (const q of ['after=-1', 'after=abc', 'after=1e400', 'after=1.5', 'after=', 'limit=0', 'limit=100000', 'limit=-5', 'wait=61', 'wait=-1', 'wait=abc', 'after=1&after=2', 'limit=1&limit=x', 'after=9007199254740993', 'token=x', '%zz=1', 'after[a]=1', `after=${'9'.repeat(5000)}`]) {
    yield { kind: `queue query ${q.slice(0, 30)}`, method: 'GET', path: `/v1/sessions/h1/queue?${q}`, headers: {} };
    yield { kind: `events query ${q.slice(0, 30)}`, method: 'GET', path: `/v1/sessions/h1/events?${q}`, headers: {} };
  }
  for (let k = 0; k < 120; k++) {
    const value = rnd.pick(['Bearer', 'Bearer ', `Bearer ${ADMIN}x`, `bearer  ${'a'.repeat(rnd.int(9000))}`, 'Basic YTpi', `Bearer ${'e30.'.repeat(3)}`, `Bearer eyJhbGciOiJub25lIn0.${Buffer.from('{"scope":"admin","sessions":["*"],"exp":9999999999}').toString('base64url')}.`, `Bearer ${Buffer.from(Array.from({ length: 40 }, () => 33 + rnd.int(90))).toString('latin1')}`]);
    yield { kind: 'bad credentials', method: 'POST', path: '/v1/sessions/h3/events', headers: { 'content-type': 'application/json', authorization: value }, body: '{"type":"note","data":{}}', expect: 401 };
  }
}

t.test('hostile HTTP input: no 5xx, the envelope, nothing half-stored', async (t) => {
  const auth = { ...testConfig().auth, tokens: [{ token: ADMIN, scopes: ['admin' as const], sessions: ['*'] }], open: false };
  const srv = await startServer(t, { auth, rateLimit: 0, maxEventBytes: 65_536 });
  t.teardown(() => agent.destroy());
  const failures: string[] = [];
  const byKind = new Map<string, number>();
  let before = await snapshot(srv);
  let count = 0;
  for (const c of httpCases()) {
    count++;
    const key = c.kind.replace(/ \S+$/, '');
    byKind.set(key, (byKind.get(key) ?? 0) + 1);
    const headers = { ...AUTH, ...c.headers };
    const body = typeof c.body === 'string' ? Buffer.from(c.body) : c.body;
    let reply: RawReply;
    try {
      reply = await raw(srv, c.method, c.path, headers, body);
    } catch (err) {
      failures.push(`${c.kind}: no reply (${(err as Error).message})`);
      continue;
    }
    const wrong = problem(reply, c.method) ?? (c.expect !== undefined && reply.status !== c.expect ? `expected ${c.expect}, got ${reply.status}: ${reply.text.slice(0, 200)}` : undefined);
    if (wrong) failures.push(`${c.kind}: ${wrong}`);
    const after = await snapshot(srv);
    if (reply.status >= 400 && after !== before) failures.push(`${c.kind}: a ${reply.status} changed the store (${before} -> ${after})`);
    before = after;
  }
  t.ok(count >= 4500, `${count} HTTP cases run (seed ${SEED})`);
  t.same(failures.slice(0, 20), [], `${failures.length} failures`);
  t.same(Object.getOwnPropertyNames(Object.prototype).filter((k) => /polluted/.test(k)), [], 'Object.prototype untouched');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no polluted property anywhere');
  const entries = (await srv.app.horologium.store.readQueue('h2', 0, 1000)).entries;
  t.ok(entries.length > 300, 'the accepted cases were stored');
  t.ok(entries.every((e) => isUtf8(e.result) && e.result.toString().isWellFormed() && !e.result.includes('\\ud8')), 'every stored result is well-formed Unicode');
  const proto = entries.find((e) => e.callId.startsWith('p-__proto__'));
  t.match(proto?.result.toString(), /^\{"__proto__":\{"polluted":true\}\}$/, 'a __proto__ key is kept as data, byte for byte');
  t.equal((await srv.get('/healthz')).status, 200, 'still up');
  t.comment(`cases by kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}`);
});

// ---- WebSocket --------------------------------------------------------------------------------

const ALLOWED_CLOSES = new Set([1000, 1001, 1003, 1005, 1009, 4001, 4003, 4008]);

interface Peer {
  ws: WebSocket;
  frames: string[];
  closed: Promise<number>;
}

async function open(srv: Running, query = `?token=${ADMIN}`): Promise<Peer> {
  const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/v1/stream${query}`);
  const frames: string[] = [];
  ws.on('message', (d) => frames.push(d.toString()));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, frames, closed };
}

/** Sends a subscribe and waits for its answer: the socket is alive and has handled all before it. */
async function alive(peer: Peer, session = 'h1'): Promise<boolean> {
  const n = peer.frames.length;
  peer.ws.send(JSON.stringify({ method: 'subscribe', params: { session } }));
  for (let k = 0; k < 400; k++) {
    if (peer.frames.slice(n).some((f) => f.includes('"method":"subscribed"'))) return true;
    if (peer.ws.readyState !== WebSocket.OPEN) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

function wsMessages(): Array<{ kind: string; data: string | Buffer }> {
  const out: Array<{ kind: string; data: string | Buffer }> = [];
  for (let k = 0; k < 300; k++) out.push({ kind: 'invalid JSON', data: mutate('{"method":"subscribe","params":{"session":"h1","since":0}}').toString() });
  for (let k = 0; k < 100; k++) out.push({ kind: 'unknown method', data: JSON.stringify({ method: `m${rnd.int(1e6)}`, params: {} }) });
  for (const v of HOSTILE_VALUES) {
    out.push({ kind: 'non-object message', data: JSON.stringify(v) });
    out.push({ kind: 'bad session', data: JSON.stringify({ method: 'subscribe', params: { session: v } }) });
    out.push({ kind: 'bad since', data: JSON.stringify({ method: 'subscribe', params: { session: 'h1', since: v } }) });
    out.push({ kind: 'bad params', data: JSON.stringify({ method: rnd.pick(['subscribe', 'unsubscribe', 'refresh', 'auth']), params: v }) });
  }
  for (const key of ['__proto__', 'constructor', 'prototype']) out.push({ kind: 'proto keys', data: `{"${key}":{"method":"subscribe"},"method":"subscribe","params":{"${key}":{"session":"h1"}}}` });
  for (let k = 0; k < 50; k++) out.push({ kind: 'invalid UTF-8 text', data: Buffer.concat([Buffer.from('{"method":"subscribe","params":{"session":"h'), Buffer.from(rnd.pick(INVALID_UTF8)), Buffer.from('"}}')]) });
  return out;
}

t.test('hostile WebSocket traffic: error frames, section 5 close codes, a server that stays up', async (t) => {
  const auth = { ...testConfig().auth, tokens: [{ token: ADMIN, scopes: ['admin' as const], sessions: ['*'] }], open: false };
  const srv = await startServer(t, { auth, rateLimit: 0 });
  const before = await snapshot(srv);
  let cases = 0;
  const failures: string[] = [];

  // Bad messages on one socket: each is answered by an error frame at most, and the socket lives.
  const peer = await open(srv);
  for (const m of wsMessages()) {
    cases++;
    // A Buffer is sent as a text frame too: these are text frames of invalid UTF-8.
    peer.ws.send(m.data, { binary: false });
  }
  if (!(await alive(peer))) failures.push(`the socket did not survive the bad messages: closed ${await Promise.race([peer.closed, new Promise((r) => setTimeout(() => r('open'), 100))])}, last frames ${peer.frames.slice(-3).join(' ').slice(0, 300)}`);
  const replies = peer.frames.filter((f) => f !== '💓').map((f) => JSON.parse(f));
  const odd = replies.filter((f) => !(f.method === 'error' && typeof f.result.code === 'string') && f.method !== 'subscribed' && f.method !== 'unsubscribed' && f.method !== 'status');
  if (odd.length) failures.push(`unexpected frames: ${JSON.stringify(odd.slice(0, 3))}`);
  if (replies.some((f) => f.method === 'error' && LEAK.test(f.result.message))) failures.push('an error frame leaks internals');

  // Fragmented messages are one message.
  for (let k = 0; k < 20; k++) {
    cases++;
    const text = JSON.stringify({ method: 'subscribe', params: { session: `h${1 + (k % 3)}` } });
    const cut1 = 1 + rnd.int(text.length - 2);
    const cut2 = cut1 + rnd.int(text.length - cut1);
    const n = peer.frames.length;
    peer.ws.send(text.slice(0, cut1), { fin: false });
    peer.ws.send(text.slice(cut1, cut2), { fin: false });
    peer.ws.send(text.slice(cut2), { fin: true });
    for (let w = 0; w < 200 && !peer.frames.slice(n).some((f) => f.includes('"subscribed"')); w++) await new Promise((r) => setTimeout(r, 5));
    if (!peer.frames.slice(n).some((f) => f.includes('"subscribed"'))) failures.push(`fragmented subscribe ${k} was not understood`);
  }

  // A flood of 5,000 messages: handled in order, the socket and the server stay up.
  const flood = await open(srv);
  for (let k = 0; k < 5000; k++) flood.ws.send(k % 2 ? '💓' : '{"method":"nope"}');
  cases += 5000;
  if (!(await alive(flood))) failures.push('the flooded socket did not survive');
  const floodErrors = flood.frames.filter((f) => f.includes('UNKNOWN_METHOD')).length;
  if (floodErrors !== 2500) failures.push(`flood: ${floodErrors} error frames for 2500 unknown methods`);
  flood.ws.close();

  // Binary frames: 1003. Oversized frames: 1009. Unauthenticated garbage first: 4001.
  const closes: Array<Promise<[string, number]>> = [];
  for (let k = 0; k < 30; k++) {
    const p = await open(srv);
    p.ws.send(Buffer.from(Array.from({ length: 1 + rnd.int(100) }, () => rnd.int(256))), { binary: true });
    closes.push(p.closed.then((c) => ['binary', c]));
  }
  for (let k = 0; k < 10; k++) {
    const p = await open(srv);
    p.ws.send('x'.repeat(64 * 1024 + 1 + rnd.int(100_000)));
    closes.push(p.closed.then((c) => ['oversized', c]));
  }
  for (let k = 0; k < 30; k++) {
    const p = await open(srv, '');
    p.ws.send(rnd.pick(['{}', 'null', '{"method":"subscribe","params":{"session":"h1"}}', '{"method":"auth","params":{"token":"nope-nope-nope"}}', mutate('{"method":"auth","params":{"token":"x"}}')]), { binary: false });
    closes.push(p.closed.then((c) => ['garbage before auth', c]));
  }
  cases += closes.length;
  const expected: Record<string, number> = { binary: 1003, oversized: 1009, 'garbage before auth': 4001 };
  for (const [kind, code] of await Promise.all(closes)) {
    if (!ALLOWED_CLOSES.has(code)) failures.push(`${kind}: close code ${code} is not a section 5 code`);
    if (code !== expected[kind]) failures.push(`${kind}: closed with ${code}, expected ${expected[kind]}`);
  }

  t.ok(cases >= 5500, `${cases} WebSocket cases run (seed ${SEED})`);
  t.same(failures.slice(0, 20), [], `${failures.length} failures`);
  t.ok(await alive(peer, 'h2'), 'the first socket is still served');
  peer.ws.close();
  t.equal(await snapshot(srv), before, 'no WebSocket message changed the store');
  t.equal((await srv.get('/healthz')).status, 200);
});

t.test('slow partial requests hold nothing and block no one', async (t) => {
  const auth = { ...testConfig().auth, tokens: [{ token: ADMIN, scopes: ['admin' as const], sessions: ['*'] }], open: false };
  const srv = await startServer(t, { auth, rateLimit: 0 });
  const url = new URL(srv.url);
  const before = await snapshot(srv);
  const sockets = Array.from({ length: 30 }, (_, k) => {
    const s = tcpConnect(Number(url.port), url.hostname);
    s.on('error', () => undefined);
    const body = `{"type":"note","data":{"k":${k}}}`;
    // Half stop inside the headers, half inside the body.
    s.write(k % 2 ? `POST /v1/sessions/h3/events HTTP/1.1\r\nHost: x\r\nAuthor` : `POST /v1/sessions/h3/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 100}\r\n\r\n${body}`);
    return s;
  });
  await new Promise((r) => setTimeout(r, 300));
  const served = await Promise.all(Array.from({ length: 40 }, (_, k) => srv.post('/v1/sessions/h1/events', { type: 'note', data: { k } }, AUTH)));
  t.ok(served.every((r) => r.status === 202), 'other clients are served meanwhile');
  t.equal(await snapshot(srv), before.replace(/h1:0\/0\/0/, 'h1:40/0/0').replace(/depth=\d+/, 'depth=0'), 'only the complete requests stored anything');
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 100));
  t.equal((await srv.get('/v1/sessions/h3/events', AUTH)).json.head, 0, 'the cut requests stored nothing');
  t.equal((await srv.get('/healthz')).status, 200);
});
