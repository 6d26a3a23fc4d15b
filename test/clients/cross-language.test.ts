/**
 * One result, three languages: the JavaScript producer (its JSON text through rawJson, since a JS
 * number cannot hold it), the Python client and the Ruby client (their own integers and maps) post
 * the same large-integer result to one real server, and the queue holds byte-identical entries.
 * Where python3 or ruby is missing its part skips with a message, except under CI=true.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { Producer, rawJson } from '../../src/producer/index.js';
import { startServer } from '../helpers/server.js';

const TEXT = '{"n":123456789012345678901234567890,"neg":-98765432109876543210,"list":[1,2,{"z":0,"a":"é😀"}]}';
const CLIENTS = fileURLToPath(new URL('../../clients/', import.meta.url));

const PYTHON = `
import sys
from horologium import Producer
Producer(sys.argv[1]).tool_result("x", "py", "calc", {"n": 123456789012345678901234567890, "neg": -98765432109876543210, "list": [1, 2, {"z": 0, "a": "é😀"}]})
`;
const RUBY = `
require 'horologium'
Horologium::Producer.new(url: ARGV[0]).tool_result('x', call_id: 'rb', name: 'calc', result: { n: 123456789012345678901234567890, neg: -98765432109876543210, list: [1, 2, { z: 0, a: 'é😀' }] })
`;

/** Runs the language's snippet (asynchronously: the server answering it runs in this process). */
async function run(t: Test, binary: string, args: string[], cwd: string): Promise<boolean> {
  if (spawnSync(binary, ['--version']).status !== 0) {
    if (process.env.CI === 'true') t.fail(`${binary} not found: the cross-language test must run in CI`);
    else t.comment(`SKIP: ${binary} not found; its part did not run`);
    return false;
  }
  try {
    await promisify(execFile)(binary, args, { cwd, timeout: 30_000 });
    t.pass(`${binary} posted its result`);
    return true;
  } catch (err) {
    t.fail(`${binary} could not post its result: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
    return false;
  }
}

t.test('JavaScript, Python and Ruby post one large-integer result; the queue holds it byte for byte each time', async (t) => {
  const srv = await startServer(t);
  await new Producer({ url: srv.url }).toolResult('x', { call_id: 'js', name: 'calc', result: rawJson(TEXT) });
  const posted = ['js'];
  if (await run(t, process.env.PYTHON ?? 'python3', ['-c', PYTHON, srv.url], `${CLIENTS}python`)) posted.push('py');
  if (await run(t, process.env.RUBY ?? 'ruby', ['-Ilib', '-e', RUBY, srv.url], `${CLIENTS}ruby`)) posted.push('rb');
  const page = (await srv.get('/v1/sessions/x/queue?after=0')).json as { entries: Array<{ call_id: string; message: { content: string } }> };
  t.same(page.entries.map((e) => e.call_id), posted);
  for (const entry of page.entries) t.equal(entry.message.content, TEXT, `${entry.call_id}: the same bytes`);
  const raw = (await srv.get('/v1/sessions/x/queue?after=0')).text;
  t.equal(raw.split(`"result":${TEXT}`).length - 1, posted.length, 'and the same result member in the reply text');
});
