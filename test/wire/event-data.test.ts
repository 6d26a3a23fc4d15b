/**
 * One definition of the tool events' data (issue 46, part 2; docs/protocol.md sections 4 and 12):
 * what a real server composes for tool_starting and tool_completed parses, with no member more or
 * less, against the zod schemas of src/wire/schemas.ts (schemas/tool-*-data.json), and the SDK's
 * types are those schemas' types (checked by the compiler). v1.2's result_bytes and truncated on
 * every kind of result: text that fits, text cut, an object collapsed to its content (not a cut),
 * a pass-through read_file object, non-ASCII text, an error.
 */
import t from 'tap';
import type { z } from 'zod';
import type { ToolCompletedData, ToolStartingData } from '../../src/client/index.js';
import { toolCompletedDataSchema, toolStartingDataSchema } from '../../src/wire/schemas.js';
import { startServer } from '../helpers/server.js';

// The compiler checks that each type is assignable to the other: a member added to a schema and not
// to the SDK's type (or the other way round) fails the type check of `npm test`.
type StartingData = z.infer<typeof toolStartingDataSchema>;
type CompletedData = z.infer<typeof toolCompletedDataSchema>;
export const typesAgree = (s: StartingData, c: CompletedData, ss: ToolStartingData, sc: ToolCompletedData): [ToolStartingData, ToolCompletedData, StartingData, CompletedData] => [s, c, ss, sc];

const LIMIT = 4000;
const long = 'x'.repeat(LIMIT + 1);
const CASES: Array<{ name: string; result: unknown; truncated: boolean; is_error?: boolean }> = [
  { name: 'grep', result: 'fits', truncated: false },
  { name: 'grep', result: 'x'.repeat(LIMIT), truncated: false },
  { name: 'grep', result: long, truncated: true },
  { name: 'grep', result: { content: 'short', other: long }, truncated: false },
  { name: 'grep', result: { content: long }, truncated: true },
  { name: 'grep', result: { no_content: long }, truncated: true },
  { name: 'read_file', result: { path: 'a.ts', content: long }, truncated: false },
  { name: 'grep', result: 'é€😀'.repeat(10), truncated: false },
  { name: 'grep', result: 12345678901234567890123, truncated: false },
  { name: 'grep', result: 'failed', truncated: false, is_error: true },
];

t.test('tool_starting and tool_completed data: exactly the schemas, with result_bytes and truncated', async (t) => {
  const srv = await startServer(t);
  for (const [k, c] of CASES.entries()) {
    const callId = `c${k}`;
    t.equal((await srv.post('/v1/sessions/d1/tool-calls', { call_id: callId, name: c.name, args: { k } })).status, 202);
    const body = `{"call_id":"${callId}","name":"${c.name}","result":${JSON.stringify(c.result).replace('12345678901234567890000', '12345678901234567890123')}${c.is_error ? ',"is_error":true' : ''}}`;
    t.equal((await srv.post('/v1/sessions/d1/tool-results', body)).status, 202);
  }
  const events = (await srv.get('/v1/sessions/d1/events?limit=100')).json.events as Array<{ result: { type: string; data: Record<string, unknown> } }>;
  const entries = (await srv.get('/v1/sessions/d1/queue?limit=100')).json.entries as Array<{ call_id: string; message: { content: string } }>;
  for (const e of events.filter((e) => e.result.type === 'tool_starting')) {
    t.ok(toolStartingDataSchema.strict().safeParse(e.result.data).success, `tool_starting of ${e.result.data.call_id} is the schema, nothing more`);
  }
  const completed = events.filter((e) => e.result.type === 'tool_completed');
  t.equal(completed.length, CASES.length);
  for (const [k, c] of CASES.entries()) {
    const data = completed[k]!.result.data;
    const parsed = toolCompletedDataSchema.strict().safeParse(data);
    t.ok(parsed.success, `c${k}: the schema, nothing more${parsed.success ? '' : `: ${parsed.error.message}`}`);
    const content = entries.find((e) => e.call_id === `c${k}`)!.message.content;
    t.equal(data.result_bytes, Buffer.byteLength(content), `c${k}: result_bytes is the UTF-8 length of message.content (${Buffer.byteLength(content)})`);
    t.equal(data.truncated, c.truncated, `c${k}: truncated ${c.truncated}`);
  }
});
