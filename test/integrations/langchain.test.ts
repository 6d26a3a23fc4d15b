/**
 * horologium-sdk/langchain (issue 47, part 2) with the real @langchain/core: tools invoked with a
 * ToolCall (as an agent or LangGraph's ToolNode does) and with plain input, a failing tool, the
 * handler as the callbacks of the run; a real server then holds each call and result (call ids,
 * names, arguments, results byte for byte, is_error), the tools' own results are unchanged, and with
 * the server down the tools answer the same with one warning.
 */
import { ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import t from 'tap';
import { z } from 'zod';
import { HorologiumCallbackHandler } from '../../src/integrations/langchain.js';
import { Producer } from '../../src/producer/producer.js';
import { freePort } from '../helpers/process.js';
import { startServer } from '../helpers/server.js';

const weather = tool(async ({ city }: { city: string }) => `21 °C in ${city}`, {
  name: 'weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});
const broken = tool(
  async (): Promise<string> => {
    throw new Error('no signal');
  },
  { name: 'broken', description: 'fails', schema: z.object({}) },
);

async function runTools(callbacks: HorologiumCallbackHandler[]) {
  const viaCall = (await weather.invoke({ id: 'call_w', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }, { callbacks })) as ToolMessage;
  const plain = await weather.invoke({ city: 'Bergen' }, { callbacks });
  const failed = await broken.invoke({ id: 'call_b', name: 'broken', args: {}, type: 'tool_call' }, { callbacks }).then(
    () => 'no error',
    (err: Error) => err.message,
  );
  return { viaCall: [viaCall.content, viaCall.tool_call_id], plain, failed };
}

t.test('tools run with the handler: each call and result in Horologium, the tools unchanged', async (t) => {
  const srv = await startServer(t);
  const handler = new HorologiumCallbackHandler({ producer: new Producer({ url: srv.url }), session: 'lc-1' });
  const without = await runTools([]);
  const withHandler = await runTools([handler]);
  await handler.flush();
  t.same(withHandler, without, "the tools' results are the same with the handler");
  t.same(withHandler.viaCall, ['21 °C in Oslo', 'call_w']);

  const queue = (await srv.get('/v1/sessions/lc-1/queue')).json.entries as Array<{ call_id: string; name: string; args: unknown; is_error: boolean; message: { content: string } }>;
  t.equal(queue.length, 3, 'three results');
  const byId = Object.fromEntries(queue.map((e) => [e.call_id, e]));
  t.same([byId.call_w?.name, byId.call_w?.args, byId.call_w?.message.content, byId.call_w?.is_error], ['weather', { city: 'Oslo' }, '"21 °C in Oslo"', false], 'the ToolCall id, its args, the ToolMessage content');
  t.same([byId.call_b?.is_error, byId.call_b?.message.content], [true, '{"error":"no signal"}'], 'a failing tool: an is_error result');
  const plainRun = queue.find((e) => e.call_id !== 'call_w' && e.call_id !== 'call_b')!;
  t.match(plainRun.call_id, /^[0-9a-f-]{36}$/, 'without a ToolCall, the run id is the call_id');
  t.same([plainRun.args, plainRun.message.content], [{ city: 'Bergen' }, '"21 °C in Bergen"'], 'and the output is the result');
  const events = (await srv.get('/v1/sessions/lc-1/events')).json.events.map((e: any) => [e.result.type, e.result.data.call_id]);
  for (const id of ['call_w', 'call_b', plainRun.call_id]) {
    t.same(events.filter(([, c]: [string, string]) => c === id).map(([type]: [string]) => type), ['tool_starting', 'tool_completed'], `${id}: its call, then its result`);
  }
});

t.test('with the server down, the tools answer the same, with one warning', async (t) => {
  const warnings: string[] = [];
  const producer = new Producer({ url: `http://127.0.0.1:${await freePort()}`, retries: 1, backoff: { initialMs: 10, maxMs: 20 } });
  const handler = new HorologiumCallbackHandler({ producer, session: () => 'lc-down', warn: (m) => warnings.push(m) });
  t.same(await runTools([handler]), await runTools([]));
  await handler.flush();
  t.equal(warnings.length, 1, 'one warning, not one per post');
});
