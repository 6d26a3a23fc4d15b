/**
 * AG-UI (docs/protocol.md section 11), consumed as a CopilotKit panel would: @ag-ui/client's
 * HttpAgent with its event verifier, every event validated by @ag-ui/core's schemas.
 */
import { HttpAgent, verifyEvents, type BaseEvent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import t from 'tap';
import { startServer, type Running } from './helpers/server.js';
import { until } from './helpers/wait.js';

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
