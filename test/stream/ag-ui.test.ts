/**
 * AG-UI (docs/protocol.md section 11), consumed as a CopilotKit panel would: @ag-ui/client's
 * HttpAgent with its event verifier, every event validated by @ag-ui/core's schemas.
 */
import { HttpAgent, verifyEvents, type BaseEvent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import t from 'tap';
import { startServer, type Running } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

/** Runs an HttpAgent against POST /v1/ag-ui and collects the events, each validated. */
function watch(srv: Running, threadId: string, forwardedProps: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const agent = new HttpAgent({ url: `${srv.url}/v1/ag-ui`, headers });
  const events: BaseEvent[] = [];
  const invalid: string[] = [];
  let failure: unknown;
  const subscription = agent
    .run({ threadId, runId: 'run-1', messages: [], tools: [], context: [], state: {}, forwardedProps })
    .pipe(verifyEvents(false))
    .subscribe({
      next: (event) => {
        const checked = EventSchemas.safeParse(event);
        if (!checked.success) invalid.push(`${event.type}: ${checked.error.message}`);
        events.push(event);
      },
      error: (err) => (failure = err),
    });
  return { events, invalid, failure: () => failure, stop: () => subscription.unsubscribe() };
}

const strip = (e: BaseEvent) => {
  const { timestamp: _t, ...rest } = e as BaseEvent & { timestamp?: number };
  return rest;
};

t.test('replay and live as AG-UI events through HttpAgent, each valid', async (t) => {
  const srv = await startServer(t);
  const S = '/v1/sessions/ag1';
  // Raw JSON text: a JavaScript number could not hold this integer.
  await srv.post(`${S}/tool-calls`, '{"call_id":"c1","name":"grep","args":{"q":"TODO","n":12345678901234567890123}}');
  await srv.post(`${S}/tool-results`, { call_id: 'c1', name: 'grep', result: { content: 'src/a.ts:1: TODO' } });
  await srv.post(`${S}/tool-results`, { call_id: 'c2', name: 'read_file', result: '{"path":"a.ts","content":"<script>x</script>","n":1.50}' });
  await srv.post(`${S}/events`, { type: 'thinking', data: { text: 'hmm' } });
  const frames = (await srv.get(`${S}/events`)).json.events;
  const w = watch(srv, 'ag1');
  t.teardown(() => w.stop());
  await until(() => w.events.length === 7, 'the replayed events');
  await srv.post(`${S}/events`, { type: 'note', data: { k: 1 } });
  await until(() => w.events.length === 8, 'the live event');
  t.equal(w.failure(), undefined, 'the verifier accepted the stream');
  t.same(w.invalid, [], 'every event validates against @ag-ui/core');
  t.same(w.events.map(strip), [
    { type: 'RUN_STARTED', threadId: 'ag1', runId: 'run-1' },
    { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'grep' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"q":"TODO","n":12345678901234567890123}' },
    { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    { type: 'TOOL_CALL_RESULT', toolCallId: 'c1', messageId: frames[1].result.uuid, role: 'tool', content: 'src/a.ts:1: TODO' },
    { type: 'TOOL_CALL_RESULT', toolCallId: 'c2', messageId: frames[2].result.uuid, role: 'tool', content: '{"path":"a.ts","content":"<script>x</script>","n":1.50}' },
    { type: 'CUSTOM', name: 'thinking', value: { text: 'hmm' } },
    { type: 'CUSTOM', name: 'note', value: { k: 1 } },
  ]);
  const stamps = w.events.slice(1).map((e) => (e as { timestamp?: number }).timestamp);
  // Events 1-3 come from frame 0 (tool_starting), then one event per frame.
  t.same(stamps.slice(0, 6), [0, 0, 0, 1, 2, 3].map((k) => Math.round(frames[k].result.timestamp * 1000)), 'timestamps: the status events, in integer ms');
  t.ok(stamps.every((s) => Number.isInteger(s)), 'integers, the live one too');
});

t.test('resume: forwardedProps.since and epoch; Last-Event-ID on the GET stream', async (t) => {
  const srv = await startServer(t);
  for (let k = 1; k <= 4; k++) await srv.post('/v1/sessions/ag2/events', { type: 'note', data: { k } });
  const epoch = (await srv.get('/v1/sessions/ag2/events')).json.epoch;
  const w = watch(srv, 'ag2', { since: 2, epoch });
  t.teardown(() => w.stop());
  await until(() => w.events.length === 3, 'the events after seq 2');
  t.same(w.events.map((e) => (e as { name?: string; value?: { k: number } }).value?.k), [undefined, 3, 4]);

  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const res = await fetch(`${srv.url}/v1/sessions/ag2/ag-ui`, { headers: { 'last-event-id': `${epoch}:3` }, signal: abort.signal });
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('"k":4')) text += new TextDecoder().decode((await reader.read()).value);
  const records = text.split('\n\n').filter((r) => r !== '');
  t.match(records[0], /^data: \{"type":"RUN_STARTED","timestamp":\d+,"threadId":"ag2","runId":"[0-9a-f-]{36}"\}$/);
  t.match(records[1], new RegExp(`^id: ${epoch}:4\\ndata: \\{"type":"CUSTOM","timestamp":\\d+,"name":"note","value":\\{"k":4\\}\\}$`), 'the id line before the event');
});

t.test('POST /v1/ag-ui refuses what is not a RunAgentInput, and sessions the token does not cover', async (t) => {
  const tokens = [{ token: 'ag-ui-subscriber-0123456789', scopes: ['subscribe' as const], sessions: ['mine'] }];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const auth = { authorization: `Bearer ${tokens[0]!.token}` };
  const bad = await srv.post('/v1/ag-ui', { threadId: 'mine' }, auth);
  t.equal(bad.status, 400);
  t.equal(bad.json.error.code, 'INVALID_BODY');
  const input = { threadId: 'other', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  t.equal((await srv.post('/v1/ag-ui', input, auth)).status, 403);
  t.equal((await srv.post('/v1/ag-ui', { ...input, threadId: 'bad id' }, auth)).json.error.code, 'INVALID_SESSION_ID');
  t.equal((await srv.post('/v1/ag-ui', input)).status, 401);
  const w = watch(srv, 'mine', {}, auth);
  t.teardown(() => w.stop());
  await until(() => w.events.length === 1, 'RUN_STARTED');
  t.equal(w.events[0]?.type, 'RUN_STARTED');
});

/** An HttpAgent that runs against POST /v1/ag-ui and builds `agent.messages`, every event validated. */
function agentRun(srv: Running, threadId: string, forwardedProps: Record<string, unknown>) {
  const agent = new HttpAgent({ url: `${srv.url}/v1/ag-ui`, threadId });
  const events: BaseEvent[] = [];
  const invalid: string[] = [];
  const finished = agent.runAgent(
    { runId: 'run-1', forwardedProps },
    {
      onEvent: ({ event }) => {
        const checked = EventSchemas.safeParse(event);
        if (!checked.success) invalid.push(`${event.type}: ${checked.error.message}`);
        events.push(event);
      },
    },
  );
  return { agent, events, invalid, finished };
}

t.test('snapshot: one MESSAGES_SNAPSHOT, then live; HttpAgent ends with the same messages as with every event', async (t) => {
  const srv = await startServer(t);
  const S = '/v1/sessions/ag-snap';
  const post = async (path: string, body: unknown) => t.equal((await srv.post(`${S}/${path}`, body)).status, 202, `${path}`);
  await post('tool-calls', '{"call_id":"c1","name":"grep","args":{"q":"TODO","n":12345678901234567890123}}');
  await post('tool-calls', { call_id: 'c5', name: 'fetch', args: { url: 'https://example.com' } }); // still running when the client joins
  await post('tool-results', { call_id: 'c1', name: 'grep', result: { content: 'found 3' } });
  await post('events', { type: 'thinking', data: { text: 'hmm' } });
  await post('tool-results', { call_id: 'c2', name: 'read_file', result: { path: 'a.ts', content: 'x', n: 1.5 } }); // no tool-calls before it
  await post('tool-calls', { call_id: 'c3', name: 'ls', args: { dir: '.' } });
  await post('tool-results', { call_id: 'c3', name: 'ls', result: ['a', 'b'] });
  await post('tool-calls', { call_id: 'c4', name: 'sh', args: { cmd: 'false' } });
  await post('tool-results', { call_id: 'c4', name: 'sh', result: 'exit status 1', is_error: true });
  const { epoch, events: frames } = (await srv.get(`${S}/events`)).json;

  const full = agentRun(srv, 'ag-snap', {});
  const snap = agentRun(srv, 'ag-snap', { snapshot: true });
  const joined = (run: typeof full) => run.agent.messages.length === 8;
  await until(() => joined(full) && joined(snap), 'both caught up');
  await post('tool-results', { call_id: 'c5', name: 'fetch', result: { content: '<html>' } });
  await post('tool-calls', { call_id: 'c6', name: 'grep', args: { q: 'live' } });
  await until(() => [full, snap].every((r) => r.agent.messages.length === 10), 'the live events');
  const live = (await srv.get(`${S}/events?after=9`)).json.events;
  t.equal((await fetch(`${srv.url}${S}`, { method: 'DELETE' })).status, 200);
  await Promise.all([full.finished, snap.finished]);

  t.same(snap.agent.messages, full.agent.messages, 'the same messages, in the same order');
  // @ag-ui/client's rule: a result goes after its call and the tool messages already behind it, or
  // at the end when its call is unknown (c2); the snapshot follows the same rule.
  t.same(full.agent.messages.map((m) => [m.role, m.id]), [
    ['assistant', 'c1'],
    ['tool', frames[2].result.uuid],
    ['assistant', 'c5'],
    ['tool', frames[4].result.uuid],
    ['tool', live[0].result.uuid],
    ['assistant', 'c3'],
    ['tool', frames[6].result.uuid],
    ['assistant', 'c4'],
    ['tool', frames[8].result.uuid],
    ['assistant', 'c6'],
  ], 'each result where the client puts it');
  t.same([full.invalid, snap.invalid], [[], []], 'every event validates against @ag-ui/core');
  t.same(snap.events.map((e) => e.type), ['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'TOOL_CALL_RESULT', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED'], 'the snapshot, then only what came after it');
  const snapshot = snap.events[1] as BaseEvent & { messages: Array<{ role: string; toolCalls?: Array<{ function: { arguments: string } }> }> };
  t.equal(snapshot.messages[0]?.toolCalls?.[0]?.function.arguments, '{"q":"TODO","n":12345678901234567890123}', 'arguments as their exact JSON text');
  t.equal(epoch.length > 0, true);
});

t.test('snapshot on the GET stream: ?snapshot=1, its id is the last event it includes; a bad value is 400', async (t) => {
  const srv = await startServer(t);
  const S = '/v1/sessions/ag-snap2';
  await srv.post(`${S}/tool-calls`, { call_id: 'c1', name: 'grep', args: { q: 'x' } });
  await srv.post(`${S}/tool-results`, { call_id: 'c1', name: 'grep', result: 'r' });
  const epoch = (await srv.get(`${S}/events`)).json.epoch;
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const res = await fetch(`${srv.url}${S}/ag-ui?snapshot=1`, { signal: abort.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('MESSAGES_SNAPSHOT')) text += new TextDecoder().decode((await reader.read()).value);
  await srv.post(`${S}/events`, { type: 'note', data: { k: 1 } });
  while (!text.includes('"note"')) text += new TextDecoder().decode((await reader.read()).value);
  const records = text.split('\n\n').filter((r) => r !== '' && !r.startsWith(':'));
  t.match(records[0], /^data: \{"type":"RUN_STARTED"/);
  t.match(records[1], new RegExp(`^id: ${epoch}:2\\ndata: \\{"type":"MESSAGES_SNAPSHOT"`), 'the snapshot is resumable from where it ends');
  t.match(records[2], new RegExp(`^id: ${epoch}:3\\ndata: \\{"type":"CUSTOM"`), 'then live, nothing replayed twice');
  t.equal(records.length, 3);
  const bad = await srv.get(`${S}/ag-ui?snapshot=2`);
  t.same([bad.status, bad.json.error.code], [400, 'INVALID_QUERY']);
});
