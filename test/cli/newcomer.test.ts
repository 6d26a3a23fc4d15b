/**
 * The built `horologium` binary for a newcomer's first hour (issue 29): `tail`'s exit codes and
 * sentences for a missing, refused or too narrow token and for a server that cannot be reached,
 * `delete`, and `token` making a JWT the server accepts for its scope and sessions only. Against
 * real servers and a closed port.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/process.js';
import { builtCopy } from '../helpers/project-copy.js';
import { startServer } from '../helpers/server.js';

const project = await builtCopy(t);
const BIN = join(project, 'dist', 'cli', 'main.js');
const cli = (args: string[]) => runCli(BIN, args);

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
  // Never connected, no --retry: one line naming the URL and why, at once (issue 44, part 6).
  const first = Date.now();
  const refused = await cli(['tail', 'mine', '--url', closed]);
  t.equal(refused.code, 1);
  t.ok(Date.now() - first < 5_000, `gave up within 5 s (${Date.now() - first} ms)`);
  t.match(refused.stderr, /^horologium: cannot connect to ws:\/\/127\.0\.0\.1:\d+\/v1\/stream: connection refused \(is the server running there\? --retry 30s keeps trying\)\n$/);
  t.notMatch(refused.stderr, /reconnecting|disconnected/, 'no reconnect lines before a first connection');
  const started = Date.now();
  const down = await cli(['tail', 'mine', '--url', closed, '--retry', '2s']);
  t.equal(down.code, 1);
  t.match(down.stderr, new RegExp(`horologium: cannot reach ws://127\\.0\\.0\\.1:\\d+/v1/stream: connection refused; retrying for up to 2s \\(--retry\\)`));
  t.match(down.stderr, /horologium: gave up: ws:\/\/127\.0\.0\.1:\d+\/v1\/stream could not be reached for 2s \(--retry forever keeps trying\)/);
  t.ok(Date.now() - started < 15_000, 'gave up within its budget');
  t.notMatch(down.stderr, /reconnecting in|disconnected \(/, 'with --retry too, no reconnect lines before a first connection');
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
