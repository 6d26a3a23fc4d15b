/**
 * horologium-sdk/ai (issue 47, part 1) under the real AI SDK: generateText with its own test model
 * (MockLanguageModelV3) calls the wrapped tools; a real server then holds each call and result
 * (call ids the AI SDK's, names, arguments, results byte for byte, is_error), the run's own result
 * is what it is without the wrapper, a tool without execute passes through, a streaming tool posts
 * its last value, and with the server down the run completes the same with one warning.
 */
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import t from 'tap';
import { flush, withHorologium } from '../../src/integrations/ai-sdk.js';
import { Producer } from '../../src/producer/producer.js';
import { freePort } from '../helpers/process.js';
import { startServer } from '../helpers/server.js';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A model that asks for the given tool calls in its first step and answers "done" in its second. */
function scriptedModel(calls: Array<{ id: string; tool: string; input: unknown }>) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () =>
      step++ === 0
        ? {
            content: calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) })),
            finishReason: { unified: 'tool-calls' as const, raw: undefined },
            usage,
            warnings: [],
          }
        : { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] },
  });
}

const anyInput = jsonSchema<Record<string, unknown>>({ type: 'object' });

function tools() {
  return {
    weather: tool({ description: 'weather', inputSchema: anyInput, execute: async (input) => ({ city: input.city, celsius: 21, big: 12345678901234567890n.toString() }) }),
    broken: tool({ description: 'fails', inputSchema: anyInput, execute: async (): Promise<string> => {
        throw new Error('no signal');
      },
    }),
    ticker: tool({
      description: 'streams',
      inputSchema: anyInput,
      async *execute() {
        yield { step: 1 };
        yield { step: 2, final: true };
      },
    }),
    client: tool({ description: 'runs in the browser', inputSchema: anyInput }),
  } satisfies ToolSet;
}

const CALLS = [
  { id: 'call_w', tool: 'weather', input: { city: 'Oslo' } },
  { id: 'call_b', tool: 'broken', input: {} },
  { id: 'call_t', tool: 'ticker', input: { n: 2 } },
];

async function run(wrapped: ToolSet) {
  const result = await generateText({ model: scriptedModel(CALLS), tools: wrapped, prompt: 'go', stopWhen: stepCountIs(2) });
  return {
    text: result.text,
    toolResults: result.steps[0]!.content.filter((p) => p.type === 'tool-result' || p.type === 'tool-error').map((p) => JSON.stringify(p)),
  };
}

t.test('generateText with wrapped tools: each call and result in Horologium, the run unchanged', async (t) => {
  const srv = await startServer(t);
  const producer = new Producer({ url: srv.url });
  const plain = await run(tools());
  const wrapped = withHorologium(tools(), { producer, session: 'ai-1' });
  t.notOk(typeof (wrapped.client as { execute?: unknown }).execute === 'function', 'a tool without execute passes through without one');
  const watched = await run(wrapped);
  await flush(wrapped);
  t.same(watched, plain, "the run's text and tool results are the same as without the wrapper");

  const events = (await srv.get('/v1/sessions/ai-1/events')).json.events.map((e: any) => e.result);
  t.same(
    events.map((e: any) => [e.type, e.data.call_id, e.data.name]).sort(),
    [
      ['tool_completed', 'call_b', 'broken'],
      ['tool_completed', 'call_t', 'ticker'],
      ['tool_completed', 'call_w', 'weather'],
      ['tool_starting', 'call_b', 'broken'],
      ['tool_starting', 'call_t', 'ticker'],
      ['tool_starting', 'call_w', 'weather'],
    ],
    'a tool_starting and a tool_completed per executed tool, with the AI SDK toolCallId',
  );
  for (const id of ['call_w', 'call_b', 'call_t']) {
    const seqs = events.filter((e: any) => e.data.call_id === id).map((e: any) => e.type);
    t.same(seqs, ['tool_starting', 'tool_completed'], `${id}: the call before its result`);
  }
  const queue = (await srv.get('/v1/sessions/ai-1/queue')).json.entries;
  const byId = Object.fromEntries(queue.map((e: any) => [e.call_id, e]));
  t.same(byId.call_w.args, { city: 'Oslo' }, 'args: the tool input');
  t.equal(byId.call_w.message.content, '{"city":"Oslo","celsius":21,"big":"12345678901234567890"}', 'the returned value, as JSON text');
  t.equal(byId.call_w.is_error, false);
  t.same([byId.call_b.is_error, byId.call_b.message.content], [true, '{"error":"no signal"}'], 'a thrown error: an is_error result');
  t.equal(byId.call_t.message.content, '{"step":2,"final":true}', "a streaming tool: its last value");
  t.ok(typeof byId.call_w.execution_time === 'number' && byId.call_w.execution_time >= 0, 'with the time it ran');
});

t.test('the session may be a function of the call', async (t) => {
  const srv = await startServer(t);
  const wrapped = withHorologium(tools(), { producer: new Producer({ url: srv.url }), session: ({ toolName }) => `ai-by-tool-${toolName}` });
  await run(wrapped);
  await flush(wrapped);
  t.equal((await srv.get('/v1/sessions/ai-by-tool-weather/queue')).json.entries.length, 1);
  t.equal((await srv.get('/v1/sessions/ai-by-tool-broken/queue')).json.entries.length, 1);
});

t.test('with the server down, the run completes the same, with one warning and no delay from posting', async (t) => {
  const down = `http://127.0.0.1:${await freePort()}`;
  const warnings: string[] = [];
  const producer = new Producer({ url: down, retries: 1, backoff: { initialMs: 10, maxMs: 20 } });
  const wrapped = withHorologium(tools(), { producer, session: 'ai-down', warn: (m) => warnings.push(m) });
  const plain = await run(tools());
  const watched = await run(wrapped);
  t.same(watched, plain, 'the same run');
  await flush(wrapped, 10_000);
  t.equal(warnings.length, 1, 'one warning for the outage, not one per post');
  t.match(warnings[0], /^horologium: a tool post failed and is dropped/);
});
