/**
 * `horologium mcp-proxy` (issue 47, part 4): an MCP Client over stdio to the proxy, in front of an
 * upstream server written with the MCP SDK (test/fixtures/mcp-upstream.mjs). The host sees the
 * upstream server as if directly (its tools, a resource, a prompt, each result unchanged); a real
 * server holds each tools/call and its CallToolResult (isError as is_error); with Horologium down,
 * the tool calls answer the same and the proxy writes one warning on stderr, never on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { freePort } from '../helpers/process.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UPSTREAM = fileURLToPath(new URL('../fixtures/mcp-upstream.mjs', import.meta.url));

/** An MCP client of the proxy (run from the sources with tsx), and what the proxy wrote on stderr. */
async function throughProxy(t: Test, url: string, session: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cli/main.ts', 'mcp-proxy', '--url', url, '--session', session, '--', process.execPath, UPSTREAM],
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return { client, stderr: () => stderr };
}

async function session(client: Client) {
  const tools = (await client.listTools()).tools.map((x) => x.name).sort();
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi', n: 12345678901 } });
  const fail = await client.callTool({ name: 'fail', arguments: {} });
  const note = await client.readResource({ uri: 'note://7' });
  const prompt = await client.getPrompt({ name: 'greet', arguments: { who: 'you' } });
  return { tools, echo, fail, note: note.contents, prompt: prompt.messages };
}

t.test('the host sees the upstream server unchanged; each tool call and result is in Horologium', async (t) => {
  const srv = await startServer(t);
  const { client, stderr } = await throughProxy(t, srv.url, 'mcp-1');
  const seen = await session(client);
  t.same(seen.tools, ['echo', 'fail'], 'tools/list forwarded');
  t.same(seen.echo, { content: [{ type: 'text', text: 'hi x12345678901' }] }, 'a tool result, unchanged');
  t.same(seen.fail, { content: [{ type: 'text', text: 'it broke' }], isError: true });
  t.same(seen.note, [{ uri: 'note://7', text: 'note 7' }], 'resources forwarded');
  t.same(seen.prompt, [{ role: 'user', content: { type: 'text', text: 'hello you' } }], 'prompts forwarded');

  await until(async () => (await srv.get('/v1/sessions/mcp-1/queue')).json.entries.length === 2, 'both results posted');
  const entries = (await srv.get('/v1/sessions/mcp-1/queue')).json.entries as Array<{ call_id: string; name: string; args: unknown; is_error: boolean; message: { content: string } }>;
  // Posted in the background: the two results may reach the queue in either order.
  t.same(entries.map((e) => [e.name, e.args, e.is_error, e.message.content]).sort(), [
    ['echo', { text: 'hi', n: 12345678901 }, false, '{"content":[{"type":"text","text":"hi x12345678901"}]}'],
    ['fail', {}, true, '{"content":[{"type":"text","text":"it broke"}],"isError":true}'],
  ], 'names, arguments, the CallToolResults byte for byte, isError as is_error');
  const events = (await srv.get('/v1/sessions/mcp-1/events')).json.events.map((e: any) => [e.result.type, e.result.data.call_id]);
  for (const { call_id } of entries) t.same(events.filter(([, c]: [string, string]) => c === call_id).map(([type]: [string]) => type), ['tool_starting', 'tool_completed'], `${call_id}: call, then result`);
  t.equal(stderr(), '', 'nothing on stderr');
});

t.test('with Horologium down, tool calls answer the same; one warning on stderr', async (t) => {
  const { client, stderr } = await throughProxy(t, `http://127.0.0.1:${await freePort()}`, 'mcp-down');
  const seen = await session(client);
  t.same(seen.echo, { content: [{ type: 'text', text: 'hi x12345678901' }] });
  t.same(seen.fail, { content: [{ type: 'text', text: 'it broke' }], isError: true });
  await until(() => stderr().includes('horologium: a tool post failed'), 'the warning', 60_000);
  t.equal(stderr().split('\n').filter((l) => l.startsWith('horologium: a tool post failed')).length, 1, 'one warning, on stderr');
});
