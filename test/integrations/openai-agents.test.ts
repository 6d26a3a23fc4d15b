/**
 * horologium-sdk/openai-agents (issue 47, part 3) with the real @openai/agents: a Runner driven by a
 * scripted Model (a function call to each tool, then an answer); a real server then holds each call
 * and result (the function call's callId, the tool's name, its arguments, what the tool returned to
 * the model), the run's final output is unchanged, and with the server down the run is the same
 * with one warning.
 */
import { Agent, Runner, Usage, tool, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import t from 'tap';
import { z } from 'zod';
import { flush, horologiumRunHooks } from '../../src/integrations/openai-agents.js';
import { Producer } from '../../src/producer/producer.js';
import { freePort } from '../helpers/process.js';
import { startServer } from '../helpers/server.js';

/** A model that calls each tool once in its first turn and answers "done" in its second. */
class ScriptedModel implements Model {
  private turn = 0;
  async getResponse(_request: ModelRequest): Promise<ModelResponse> {
    if (this.turn++ === 0) {
      return {
        usage: new Usage(),
        output: [
          { type: 'function_call', callId: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
          { type: 'function_call', callId: 'call_s', name: 'sum', arguments: '{"a":40,"b":2}', status: 'completed' },
        ],
      };
    }
    return { usage: new Usage(), output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this test');
  }
}

function agent() {
  return new Agent({
    name: 'helper',
    instructions: 'help',
    model: new ScriptedModel(),
    tools: [
      tool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `21 °C in ${city}` }),
      tool({ name: 'sum', description: 'adds', parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => ({ sum: a + b }) }),
    ],
  });
}

t.test('a Runner with the hooks: each tool call and result in Horologium, the run unchanged', async (t) => {
  const srv = await startServer(t);
  const plain = await new Runner({ tracingDisabled: true }).run(agent(), 'go');
  const runner = horologiumRunHooks(new Runner({ tracingDisabled: true }), { producer: new Producer({ url: srv.url }), session: 'oa-1' });
  const watched = await runner.run(agent(), 'go');
  await flush(runner);
  t.equal(watched.finalOutput, plain.finalOutput, 'the same final output');
  t.equal(watched.finalOutput, 'done');
  const queue = (await srv.get('/v1/sessions/oa-1/queue')).json.entries as Array<{ call_id: string; name: string; args: unknown; is_error: boolean; message: { content: string } }>;
  const byId = Object.fromEntries(queue.map((e) => [e.call_id, e]));
  t.same(Object.keys(byId).sort(), ['call_s', 'call_w'], "the function calls' callIds");
  t.same([byId.call_w?.name, byId.call_w?.args, byId.call_w?.message.content], ['weather', { city: 'Oslo' }, '"21 °C in Oslo"'], 'name, arguments, what the model was given');
  t.same([byId.call_s?.name, byId.call_s?.args, byId.call_s?.message.content], ['sum', { a: 40, b: 2 }, JSON.stringify('{"sum":42}')], "an object result, as the text the model got");
  const events = (await srv.get('/v1/sessions/oa-1/events')).json.events.map((e: any) => [e.result.type, e.result.data.call_id]);
  for (const id of ['call_w', 'call_s']) {
    t.same(events.filter(([, c]: [string, string]) => c === id).map(([type]: [string]) => type), ['tool_starting', 'tool_completed'], `${id}: its call, then its result`);
  }
});

t.test('with the server down, the run is the same, with one warning', async (t) => {
  const warnings: string[] = [];
  const producer = new Producer({ url: `http://127.0.0.1:${await freePort()}`, retries: 1, backoff: { initialMs: 10, maxMs: 20 } });
  const runner = horologiumRunHooks(new Runner({ tracingDisabled: true }), { producer, session: () => 'oa-down', warn: (m) => warnings.push(m) });
  const watched = await runner.run(agent(), 'go');
  await flush(runner);
  t.equal(watched.finalOutput, 'done');
  t.equal(warnings.length, 1, 'one warning, not one per post');
});
