/**
 * The built `horologium` binary (dist/cli/main.js of a freshly built copy) against real servers:
 * `--help` of each command, `tail` (a posted event printed within a second, `--json` frames,
 * `--since`, resuming after a restart), `post` from flags and stdin, `sessions`, `queue --ack`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/process.js';
import { builtCopy, run } from '../helpers/project-copy.js';
import { restartableServer, startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const project = await builtCopy(t);
const BIN = join(project, 'dist', 'cli', 'main.js');

const cli = (args: string[], input = '') => runCli(BIN, args, input);

interface Tail {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
}

/** A `tail` left running; its stdout lines as they arrive. */
function tail(t: Test, args: string[]): Tail {
  const child = spawn(process.execPath, [BIN, 'tail', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => child.kill('SIGKILL'));
  const lines: string[] = [];
  let buffered = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, lines, stderr: () => err };
}

t.test('--help for the program and each command', async (t) => {
  const top = await cli(['--help']);
  t.equal(top.code, 0);
  for (const [command, option] of [['serve', '--store'], ['tail', '--retry'], ['post', '--call-id'], ['sessions', '--prefix'], ['queue', '--ack'], ['delete', '<session>'], ['token', '--scope']] as const) {
    const help = await cli([command, '--help']);
    t.equal(help.code, 0, `${command} --help exits 0`);
    t.match(help.stdout, option, `${command} --help names ${option}`);
    if (command !== 'serve' && command !== 'token') t.match(help.stdout, '--url', `${command} --help names --url`);
  }
  const unknown = await cli(['tail', 's', '--nope']);
  t.not(unknown.code, 0, 'an unknown option is refused');
  t.match(unknown.stderr, /unknown option/);
});

t.test('tail prints a posted event within a second, human-readable; post from stdin and flags', async (t) => {
  const srv = await startServer(t);
  const running = tail(t, ['cli1', '--url', srv.url]);
  await until(() => running.stderr().includes('subscribed to cli1'), 'the subscription');
  const posted = Date.now();
  const call = await srv.post('/v1/sessions/cli1/tool-calls', { call_id: 'c1', name: 'grep', args: { q: 'needle' } });
  t.equal(call.status, 202);
  await until(() => running.lines.length >= 1, 'the tool_starting line', 5_000);
  const ms = Date.now() - posted;
  t.ok(ms < 1000, `printed ${ms} ms after the post`);
  t.match(running.lines[0], /#1 ▶ grep \{"q":"needle"\}$/);
  t.notMatch(running.lines[0], /\u001b\[/, 'no colours when stdout is not a terminal');

  const result = await cli(['post', 'cli1', 'result', '--url', srv.url, '--call-id', 'c1', '--name', 'grep'], '{"content":"found\\u001b]0;x","n":12345678901234567890}');
  t.equal(result.code, 0, result.stderr);
  t.same(JSON.parse(result.stdout), { call_id: 'c1', queue_seq: 1, event_seq: 2, duplicate: false });
  await until(() => running.lines.length >= 2, 'the tool_completed line');
  t.match(running.lines[1], /#2 ✓ grep \d+(\.\d+)?s found\\u001b\]0;x$/, 'control characters shown escaped');
  const queue = (await srv.get('/v1/sessions/cli1/queue')).json;
  t.equal(queue.entries[0].message.content, '{"content":"found\\u001b]0;x","n":12345678901234567890}', 'stdin posted byte for byte');

  const event = await cli(['post', 'cli1', 'event', '--url', srv.url, '--type', 'progress'], '{"step":1}');
  t.equal(event.code, 0, event.stderr);
  await until(() => running.lines.length >= 3, 'the event line');
  t.match(running.lines[2], /#3 progress \{"step":1\}$/);

  const conflict = await cli(['post', 'cli1', 'result', '--url', srv.url, '--call-id', 'c1', '--name', 'grep', '--result', '1']);
  t.equal(conflict.code, 1, 'a 409 exits 1');
  t.match(conflict.stderr, /CALL_ID_CONFLICT|already used/);
  const badKind = await cli(['post', 'cli1', 'thing', '--url', srv.url]);
  t.equal(badKind.code, 2, 'a wrong kind exits 2');
  t.match(badKind.stderr, /kind must be one of call, result, event/);
  const badJson = await cli(['post', 'cli1', 'event', '--url', srv.url, '--type', 'x', '--data', '{nope']);
  t.equal(badJson.code, 1);
  t.match(badJson.stderr, /400 INVALID_JSON/);
});

t.test('tail --json --since 0 replays the frames as sent, then resumes after a restart without repeating', async (t) => {
  const server = await restartableServer(t);
  for (let k = 1; k <= 2; k++) await server.api.post('/v1/sessions/cli2/events', { type: 'n', data: { k, big: '12345678901234567890' } });
  const running = tail(t, ['cli2', '--url', server.url, '--json', '--since', '0']);
  await until(() => running.lines.length === 2, 'the replay');
  const frames = running.lines.map((l) => JSON.parse(l));
  t.same(frames.map((f) => [f.method, f.result.seq, f.result.data.k]), [['status', 1, 1], ['status', 2, 2]]);
  const replayed = (await server.api.get('/v1/sessions/cli2/events')).json.events;
  t.same(frames, replayed, 'the frames are the ones the server sends');
  await server.restart(300);
  await server.api.post('/v1/sessions/cli2/events', { type: 'n', data: { k: 3 } });
  await until(() => running.lines.length >= 3, 'the event after the restart');
  await new Promise((r) => setTimeout(r, 300));
  t.same(running.lines.map((l) => JSON.parse(l).result.seq), [1, 2, 3], 'resumed, nothing twice');
  t.equal(running.stderr(), '', '--json keeps stderr for errors only');
});

t.test('sessions and queue --ack', async (t) => {
  const srv = await startServer(t);
  for (const s of ['cli3-a', 'cli3-b']) await srv.post(`/v1/sessions/${s}/tool-results`, { call_id: 'c', name: 'ls', result: { content: s } });
  const list = await cli(['sessions', '--url', srv.url, '--prefix', 'cli3-', '--json']);
  t.equal(list.code, 0, list.stderr);
  t.same(list.stdout.trim().split('\n').map((l) => JSON.parse(l).session), ['cli3-b', 'cli3-a'], 'most recent first');
  const human = await cli(['sessions', '--url', srv.url, '--limit', '1']);
  t.match(human.stdout, /^SESSION  STATE  EVENTS  ACKED\/QUEUE  LAST EVENT\ncli3-b   idle        1          0\/1  \d{4}-\d\d-\d\dT/, 'a header, then aligned columns');
  t.match(human.stderr, /--all/, 'says there are more pages');
  await srv.post('/v1/sessions/cli3-longer-name/events', { type: 'n', data: {} });
  const aligned = (await cli(['sessions', '--url', srv.url, '--prefix', 'cli3-'])).stdout.trim().split('\n');
  t.equal(aligned.length, 4);
  t.equal(aligned[0], 'SESSION           STATE  EVENTS  ACKED/QUEUE  LAST EVENT', 'columns as wide as the longest id');
  t.match(aligned[1], /^cli3-longer-name  idle        1          0\/0  \d{4}-/);
  t.match(aligned[3], /^cli3-a            idle        1          0\/1  \d{4}-/, 'numbers aligned to the right');
  t.same(aligned.map((l) => l.search(/\d{4}-\d\d-\d\dT|LAST EVENT/)), aligned.map(() => aligned[0]!.indexOf('LAST EVENT')), 'the last column starts at one place');
  await srv.post('/v1/sessions/cli3-bad/tool-results', { call_id: 'c', name: 'ls', result: 'no', is_error: true });
  await srv.post('/v1/sessions/cli3-busy/tool-calls', { call_id: 'c', name: 'ls', args: {} });
  const failed = await cli(['sessions', '--url', srv.url, '--prefix', 'cli3-', '--state', 'failed']);
  t.match(failed.stdout, /^SESSION   STATE     EVENTS  ACKED\/QUEUE  LAST EVENT\ncli3-bad  failed 1       1          0\/1  \d{4}-/, '--state failed: the failed session, in words');
  t.equal(failed.stdout.trim().split('\n').length, 2, 'and only it');
  const running = await cli(['sessions', '--url', srv.url, '--prefix', 'cli3-', '--state', 'running', '--json']);
  t.same(running.stdout.trim().split('\n').map((l) => JSON.parse(l).session), ['cli3-busy']);
  const wrong = await cli(['sessions', '--url', srv.url, '--state', 'busy']);
  t.not(wrong.code, 0, '--state takes running, failed or idle');
  const read = await cli(['queue', 'cli3-a', '--url', srv.url, '--ack']);
  t.equal(read.code, 0, read.stderr);
  t.match(read.stdout, /^#1 ✓ ls c \{"content":"cli3-a"\}$/m);
  t.match(read.stderr, /acknowledged through 1/);
  t.equal((await srv.get('/v1/sessions/cli3-a/queue')).json.committed, 1);
  const json = await cli(['queue', 'cli3-a', '--url', srv.url, '--json', '--after', '0']);
  t.same(JSON.parse(json.stdout).entries.map((e: { queue_seq: number }) => e.queue_seq), [1]);
  const bad = await cli(['queue', 'cli3-a', '--url', srv.url, '--limit', 'many']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--limit must be an integer/);
});

t.test('serve runs the server with the flags given', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--store', 'memory:'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => child.kill('SIGKILL'));
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  await until(() => log.includes('horologium ready'), 'the ready line', 15_000);
  t.match(log, /"store":"memory"/);
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  t.equal(health.status, 200);
  const bad = await run(process.execPath, [BIN, 'serve', '--store', 'nonsense:'], {}).catch((e: { code: number; stderr: string }) => e);
  t.equal((bad as { code: number }).code, 2, 'a bad setting exits 2');
  t.match((bad as { stderr: string }).stderr, /HOROLOGIUM_STORE/);
});
