/**
 * The built `horologium` binary (dist/cli/main.js of a freshly built copy) against real servers:
 * `--help` of each command, `tail` (a posted event printed within a second, `--json` frames,
 * `--since`, resuming after a restart), `post` from flags and stdin, `sessions`, `queue --ack`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from './helpers/process.js';
import { builtCopy, run } from './helpers/project-copy.js';
import { restartableServer, startServer } from './helpers/server.js';
import { until } from './helpers/wait.js';

const project = await builtCopy(t);
const BIN = join(project, 'dist', 'cli', 'main.js');

/** Runs the CLI to its end, with `input` on stdin (stdin is empty otherwise). */
function cli(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

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
  t.match(human.stdout, /^SESSION  EVENTS  ACKED\/QUEUE  LAST EVENT\ncli3-b        1          0\/1  \d{4}-\d\d-\d\dT/, 'a header, then aligned columns');
  t.match(human.stderr, /--all/, 'says there are more pages');
  await srv.post('/v1/sessions/cli3-longer-name/events', { type: 'n', data: {} });
  const aligned = (await cli(['sessions', '--url', srv.url, '--prefix', 'cli3-'])).stdout.trim().split('\n');
  t.equal(aligned.length, 4);
  t.equal(aligned[0], 'SESSION           EVENTS  ACKED/QUEUE  LAST EVENT', 'columns as wide as the longest id');
  t.match(aligned[1], /^cli3-longer-name       1          0\/0  \d{4}-/);
  t.match(aligned[3], /^cli3-a                 1          0\/1  \d{4}-/, 'numbers aligned to the right');
  t.same(aligned.map((l) => l.search(/\d{4}-\d\d-\d\dT|LAST EVENT/)), aligned.map(() => aligned[0]!.indexOf('LAST EVENT')), 'the last column starts at one place');
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

const SECRET = 'a-cli-test-secret-that-is-long-enough-0123';
const TOKENS = [{ token: 'cli-subscribe-mine-0123456789', scopes: ['subscribe' as const], sessions: ['mine'] }];

t.test('tail: a missing, refused or too narrow token, and a server that cannot be reached, each exit 1 with a plain sentence', async (t) => {
  const srv = await startServer(t, { auth: { tokens: TOKENS, open: false }, rateLimit: 0 });
  const none = await cli(['tail', 'mine', '--url', srv.url]);
  t.equal(none.code, 1);
  t.match(none.stderr, /^horologium: the server needs a token: give one with --token or HOROLOGIUM_CLIENT_TOKEN \(scope subscribe, covering mine\)$/m);
  const wrong = await cli(['tail', 'mine', '--url', srv.url, '--token', 'not-a-token-of-this-server-0123']);
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /^horologium: the server refused the token \(the token is not valid\): give a valid one with --token or HOROLOGIUM_CLIENT_TOKEN$/m);
  const narrow = await cli(['tail', 'other', '--url', srv.url, '--token', TOKENS[0]!.token]);
  t.equal(narrow.code, 1);
  t.match(narrow.stderr, /^horologium: the token may not read other: it needs scope subscribe and a sessions pattern that covers other/m);

  const closed = `http://127.0.0.1:${await freePort()}`;
  const started = Date.now();
  const down = await cli(['tail', 'mine', '--url', closed, '--retry', '2s']);
  t.equal(down.code, 1);
  t.match(down.stderr, new RegExp(`horologium: cannot reach ws://127\\.0\\.0\\.1:\\d+/v1/stream: connection refused; retrying for up to 2s \\(--retry\\)`));
  t.match(down.stderr, /horologium: gave up: ws:\/\/127\.0\.0\.1:\d+\/v1\/stream could not be reached for 2s \(--retry forever keeps trying\)/);
  t.ok(Date.now() - started < 15_000, 'gave up within its budget');
  const badRetry = await cli(['tail', 'mine', '--url', closed, '--retry', 'soon']);
  t.not(badRetry.code, 0);
  t.match(badRetry.stderr, /--retry must be a number with s, m or h/);
});

t.test('delete removes a session; a second delete exits 1', async (t) => {
  const srv = await startServer(t);
  await srv.post('/v1/sessions/cli4/events', { type: 'n', data: {} });
  const deleted = await cli(['delete', 'cli4', '--url', srv.url]);
  t.same([deleted.code, deleted.stdout], [0, 'deleted cli4\n']);
  t.equal((await srv.get('/v1/sessions/cli4')).status, 404);
  const again = await cli(['delete', 'cli4', '--url', srv.url]);
  t.equal(again.code, 1);
  t.match(again.stderr, /404 SESSION_NOT_FOUND/);
});

t.test('token prints a JWT the server accepts for its scope and sessions, and nothing more', async (t) => {
  const srv = await startServer(t, { auth: { tokens: [], jwtSecret: SECRET, open: false }, rateLimit: 0 });
  const made = await cli(['token', '--secret', SECRET, '--scope', 'publish,subscribe', '--session', 'team-a:*', '--ttl', '1h']);
  t.equal(made.code, 0, made.stderr);
  const jwt = made.stdout.trim();
  t.match(jwt, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
  t.same([claims.scope, claims.sessions], ['publish subscribe', ['team-a:*']]);
  t.ok(Math.abs(claims.exp - (Date.now() / 1000 + 3600)) < 30, 'expires in an hour');
  const auth = { authorization: `Bearer ${jwt}` };
  t.equal((await srv.post('/v1/sessions/team-a:s1/events', { type: 'n', data: {} }, auth)).status, 202, 'publish in its sessions');
  t.equal((await srv.get('/v1/sessions/team-a:s1/events', auth)).status, 200, 'subscribe in its sessions');
  t.equal((await srv.post('/v1/sessions/team-b:s1/events', { type: 'n', data: {} }, auth)).status, 403, 'another session: refused');
  t.equal((await srv.get('/v1/sessions/team-a:s1/queue', auth)).status, 403, 'another scope: refused');

  const fromEnv = spawnSync(process.execPath, [BIN, 'token', '--scope', 'admin', '--session', '*'], { env: { ...process.env, HOROLOGIUM_JWT_SECRET: SECRET }, encoding: 'utf8' });
  t.equal(fromEnv.status, 0, 'the secret from HOROLOGIUM_JWT_SECRET');
  t.equal((await srv.get('/v1/sessions', { authorization: `Bearer ${fromEnv.stdout.trim()}` })).status, 200);

  for (const [args, message] of [
    [['--secret', SECRET, '--scope', 'publisher', '--session', '*'], /"publisher" is not a scope \(the scopes: publish, consume, subscribe, admin\)/],
    [['--secret', 'short', '--scope', 'publish', '--session', '*'], /the secret must be at least 32 characters/],
    [['--secret', SECRET, '--session', '*'], /--scope is needed/],
    [['--secret', SECRET, '--scope', 'publish'], /--session is needed/],
    [['--secret', SECRET, '--scope', 'publish', '--session', '*', '--ttl', 'forever'], /--ttl must be at least 1s/],
  ] as const) {
    const r = spawnSync(process.execPath, [BIN, 'token', ...args], { env: { ...process.env, HOROLOGIUM_JWT_SECRET: '' }, encoding: 'utf8' });
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, message);
  }
});
