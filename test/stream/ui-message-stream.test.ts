/**
 * The AI SDK's UI message stream (docs/protocol.md section 13), read by the `ai` package itself:
 * DefaultChatTransport's reconnect (what `useChat({ resume: true })` calls) validates every chunk
 * with the SDK's own schema, and readUIMessageStream builds the assistant message from them.
 */
import { DefaultChatTransport, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from 'ai';
import t from 'tap';
import { uiMessageStreamFormat } from '../../src/wire/ui-message-stream.js';
import { restartableServer, startServer, type Running } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

type Post = Running['post'];

/** The session the issue names: three completed calls, one failed, one running, a generic event; in two halves. */
const FIRST_HALF: Array<[string, unknown]> = [
  // Raw JSON text: a JavaScript number could not hold this integer.
  ['tool-calls', '{"call_id":"c1","name":"grep","args":{"q":"TODO","n":12345678901234567890123}}'],
  ['tool-results', { call_id: 'c1', name: 'grep', result: { content: 'found 3' } }],
  ['tool-calls', { call_id: 'c2', name: 'read_file', args: { path: 'a.txt' } }],
];
const SECOND_HALF: Array<[string, unknown]> = [
  ['tool-results', { call_id: 'c2', name: 'read_file', result: { path: 'a.txt', content: 'alpha', lines: 1 } }],
  ['events', { type: 'progress', data: { step: 2, of: 5 } }],
  // A result with no tool-calls before it: the stream still shows the whole call.
  ['tool-results', { call_id: 'c3', name: 'ls', args: { dir: '.' }, result: ['a.txt', 'b.txt'] }],
  ['tool-calls', { call_id: 'c4', name: 'sh', args: { cmd: 'false' } }],
  ['tool-results', { call_id: 'c4', name: 'sh', result: 'exit status 1', is_error: true }],
  ['tool-calls', { call_id: 'c5', name: 'fetch', args: { url: 'https://example.com' } }],
];

async function agentSession(post: Post, S: string, posts = [...FIRST_HALF, ...SECOND_HALF]): Promise<void> {
  for (const [path, body] of posts) {
    const r = await post(`${S}/${path}`, body);
    if (r.status !== 202) throw new Error(`${path}: ${r.status} ${r.text}`);
  }
}

const tool = (toolCallId: string, toolName: string, input: unknown, end: Record<string, unknown>) => ({
  type: 'dynamic-tool',
  toolName,
  toolCallId,
  ...end,
  input,
  providerExecuted: true,
});

/** What the session above must become, with the epoch it was written under. */
const expectedParts = (epoch: string) => [
  tool('c1', 'grep', { q: 'TODO', n: 12345678901234567890123 }, { state: 'output-available', output: 'found 3' }),
  tool('c2', 'read_file', { path: 'a.txt' }, { state: 'output-available', output: { path: 'a.txt', content: 'alpha', lines: 1 } }),
  { type: 'data-progress', id: `${epoch}:5`, data: { step: 2, of: 5 } },
  tool('c3', 'ls', { dir: '.' }, { state: 'output-available', output: '["a.txt","b.txt"]' }),
  tool('c4', 'sh', { cmd: 'false' }, { state: 'output-error', errorText: 'exit status 1' }),
  tool('c5', 'fetch', { url: 'https://example.com' }, { state: 'input-available' }),
];

/** Key order is not the SDK's promise; compare parts as sorted-key JSON. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]).filter(([, v]) => v !== undefined))
      : value;

/** A transport as an app would build it: the reconnect pointed at this server (and a resume point, when given). */
function transport(url: string, headers: Record<string, string> = {}) {
  return new DefaultChatTransport<UIMessage>({
    api: '/api/chat',
    prepareReconnectToStreamRequest: ({ id }) => ({ api: `${url}/v1/sessions/${id}/ui-message-stream`, headers }),
  });
}

/**
 * Reads the session's stream into a message (continuing `message` when given) until `done(message)`
 * holds or the stream ends; at most `ms`.
 */
async function readMessage(url: string, session: string, done: (m: UIMessage) => boolean, options: { message?: UIMessage; headers?: Record<string, string>; ms?: number } = {}) {
  const stream = await transport(url, options.headers).reconnectToStream({ chatId: session });
  if (!stream) throw new Error('no stream');
  const errors: unknown[] = [];
  let last = options.message;
  let ended = true;
  const deadline = setTimeout(() => void stream.cancel().catch(() => undefined), options.ms ?? 10_000);
  try {
    for await (const m of readUIMessageStream({ stream, ...(options.message ? { message: options.message } : {}), onError: (e) => errors.push(e), terminateOnError: true })) {
      last = structuredClone(m);
      if (done(m)) {
        ended = false;
        break;
      }
    }
  } finally {
    clearTimeout(deadline);
  }
  if (!last) throw new Error('no message');
  return { message: last, errors, ended };
}

const partsDone = (n: number, lastState = 'input-available') => (m: UIMessage) => m.parts.length === n && (m.parts[n - 1] as { state?: string }).state === lastState;

t.test('useChat’s reconnect reads the session as one assistant message, then live, and a deletion finishes it', async (t) => {
  const srv = await startServer(t);
  const S = '/v1/sessions/u1';
  await agentSession(srv.post, S);
  const epoch = (await srv.get(`${S}/events`)).json.epoch as string;

  const raw = await fetch(`${srv.url}${S}/ui-message-stream`);
  t.equal(raw.status, 200);
  t.equal(raw.headers.get('x-vercel-ai-ui-message-stream'), 'v1', 'the header the AI SDK looks for');
  t.match(raw.headers.get('content-type'), /^text\/event-stream/);
  await raw.body?.cancel();

  const stream = await transport(srv.url).reconnectToStream({ chatId: 'u1' });
  if (!stream) throw new Error('no stream');
  const iterator = readUIMessageStream({ stream, terminateOnError: true })[Symbol.asyncIterator]();
  const next = async (done: (m: UIMessage) => boolean) => {
    for (;;) {
      const r = await iterator.next();
      if (r.done) return undefined;
      if (done(r.value)) return structuredClone(r.value);
    }
  };
  const replayed = await next(partsDone(6));
  t.equal(replayed?.id, 'u1', 'the message is the session');
  t.equal(replayed?.role, 'assistant');
  t.same(canonical(replayed?.parts), canonical(expectedParts(epoch)), 'every call with its state, input and output; the event as a data part');

  await srv.post(`${S}/tool-results`, { call_id: 'c5', name: 'fetch', result: { content: '<html>' } });
  await srv.post(`${S}/events`, { type: 'progress', data: { step: 5, of: 5 } });
  const live = await next((m) => m.parts.length === 7);
  t.same(canonical(live?.parts.slice(5)), canonical([
    tool('c5', 'fetch', { url: 'https://example.com' }, { state: 'output-available', output: '<html>' }),
    { type: 'data-progress', id: `${epoch}:11`, data: { step: 5, of: 5 } },
  ]), 'live: the running call completes in place, the next event is a new part');

  t.equal((await fetch(`${srv.url}${S}`, { method: 'DELETE' })).status, 200);
  const end = await Promise.race([iterator.next(), sleep(5000).then(() => 'timeout' as const)]);
  if (end !== 'timeout' && !end.done) t.same((await iterator.next()).done, true);
  t.not(end, 'timeout', 'a deleted session finishes the message and ends the stream');
});

t.test('each event’s last record carries id <epoch>:<seq>; a bad Last-Event-ID is 400; auth and origins as for SSE', async (t) => {
  const tokens = [{ token: 'reader-token-0123456789', scopes: ['subscribe' as const], sessions: ['u2'] }];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const S = '/v1/sessions/u2';
  const token = '?token=reader-token-0123456789';
  t.equal((await fetch(`${srv.url}${S}/ui-message-stream`)).status, 401, 'no token');
  t.equal((await fetch(`${srv.url}/v1/sessions/other/ui-message-stream${token}`)).status, 403, 'another session');
  t.equal((await fetch(`${srv.url}${S}/ui-message-stream${token}`, { headers: { origin: 'https://elsewhere.example' } })).status, 200, 'with auth configured, any origin (the token decides)');
  const bad = await fetch(`${srv.url}${S}/ui-message-stream${token}`, { headers: { 'last-event-id': 'nonsense' } });
  t.same([bad.status, ((await bad.json()) as any).error.code], [400, 'BAD_REQUEST']);
});

t.test('the records on the wire: start, then each event’s chunks with its id, every chunk valid for the SDK', async (t) => {
  const srv = await startServer(t);
  const S = '/v1/sessions/u3';
  await agentSession(srv.post, S);
  const epoch = (await srv.get(`${S}/events`)).json.epoch as string;
  const res = await fetch(`${srv.url}${S}/ui-message-stream?since=6`);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!/id: [^\n]*:9\ndata: [^\n]*\n\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const records = text.split('\n\n').filter((r) => r.startsWith('data:') || r.startsWith('id:'));
  t.same(records, [
    'data: {"type":"start","messageId":"u3"}',
    'data: {"type":"tool-input-start","toolCallId":"c4","toolName":"sh","dynamic":true,"providerExecuted":true}',
    `id: ${epoch}:7\ndata: {"type":"tool-input-available","toolCallId":"c4","toolName":"sh","dynamic":true,"providerExecuted":true,"input":{"cmd":"false"}}`,
    'data: {"type":"tool-input-available","toolCallId":"c4","toolName":"sh","dynamic":true,"providerExecuted":true,"input":{"cmd":"false"}}',
    `id: ${epoch}:8\ndata: {"type":"tool-output-error","toolCallId":"c4","errorText":"exit status 1","dynamic":true,"providerExecuted":true}`,
    'data: {"type":"tool-input-start","toolCallId":"c5","toolName":"fetch","dynamic":true,"providerExecuted":true}',
    `id: ${epoch}:9\ndata: {"type":"tool-input-available","toolCallId":"c5","toolName":"fetch","dynamic":true,"providerExecuted":true,"input":{"url":"https://example.com"}}`,
  ], '?since=6 starts after seq 6, as on the other SSE routes');
  const schema = uiMessageChunkSchema();
  for (const r of records) {
    const json = r.slice(r.indexOf('data: ') + 6);
    const checked = await schema.validate?.(JSON.parse(json));
    t.ok(checked?.success, `valid chunk: ${json.slice(0, 60)}`);
  }
});

t.test('a later subscribed is a data part with its own id; a deletion is finish then [DONE]', async (t) => {
  const format = uiMessageStreamFormat('s');
  const subscribed = (epoch: string) => JSON.stringify({ method: 'subscribed', result: { session: 's', epoch, head: 3, oldest: 1, recovered: false } });
  t.equal(format.message('subscribed', subscribed('e1')), '', 'the first: the stream’s start');
  t.equal(
    format.message('subscribed', subscribed('e2')),
    'data: {"type":"data-horologium-subscribed","id":"horologium-subscribed","data":{"session":"s","epoch":"e2","head":3,"oldest":1,"recovered":false}}\n\n',
  );
  t.equal(format.message('unsubscribed', JSON.stringify({ method: 'unsubscribed', result: { session: 's', reason: 'deleted' } })), 'data: {"type":"finish"}\n\ndata: [DONE]\n\n');
  t.equal(format.message('error', JSON.stringify({ method: 'error', result: { code: 'STORE_UNAVAILABLE', message: 'down' } })), 'data: {"type":"error","errorText":"down"}\n\n');
});

t.test('through a server restart, a reader that resumes (from the start, or from its Last-Event-ID) ends with the message of one that read once', async (t) => {
  const srv = await restartableServer(t);
  const S = '/v1/sessions/u4';
  await agentSession(srv.api.post, S, FIRST_HALF);
  const before = await readMessage(srv.url, 'u4', partsDone(2));
  const { epoch, head } = (await srv.api.get(`${S}/events`)).json;
  t.equal(head, 3);

  // The server restarts while a reader is connected: its stream ends, and it resumes.
  const interrupted = readMessage(srv.url, 'u4', () => false, { message: before.message });
  await sleep(200);
  await srv.restart(100);
  const cut = await interrupted;
  t.ok(cut.ended, 'the restart ended the stream');
  t.same(cut.errors, []);

  await agentSession(srv.api.post, S, SECOND_HALF);
  t.equal((await srv.api.get(`${S}/events`)).json.epoch, epoch, 'the same incarnation after the restart');

  const once = await readMessage(srv.url, 'u4', partsDone(6));
  const fromStart = await readMessage(srv.url, 'u4', partsDone(6), { message: cut.message });
  const fromId = await readMessage(srv.url, 'u4', partsDone(6), { message: cut.message, headers: { 'last-event-id': `${epoch}:${head}` } });
  t.same(canonical(once.message.parts), canonical(expectedParts(epoch)), 'read once: the whole session');
  t.same(canonical(fromStart.message), canonical(once.message), 'resumed from the start: the same message (every chunk is keyed, a second reading changes nothing)');
  t.same(canonical(fromId.message), canonical(once.message), 'resumed from Last-Event-ID: the same message');
  t.same([once.errors, fromStart.errors, fromId.errors], [[], [], []]);
});
