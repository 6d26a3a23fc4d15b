/**
 * deploy/nginx.conf run for real (Debian's nginx; .ci/run installs it) in front of two real
 * Horologium processes on loopback: the file is used as it is, with only its upstream addresses and
 * listening port replaced. Checked: the request id (the client's, else nginx's) reaches the server
 * and its log and comes back; X-Forwarded-Proto is passed; WebSocket upgrades and keep-alive work;
 * an instance that refuses the connection is skipped for every request (none reached it), one that
 * fails after taking a request is skipped for a GET but never for a POST (which may have been
 * stored); nginx's own failures answer with the JSON error envelope.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { freePort, logLines, spawnServer, type ServerProcess } from '../helpers/process.js';
import { client, tempDir } from '../helpers/server.js';
import { connect } from '../helpers/ws-client.js';
import { sleep } from '../helpers/wait.js';

const CONF = readFileSync(new URL('../../deploy/nginx.conf', import.meta.url), 'utf8');

function nginxAvailable(t: Test): boolean {
  if (spawnSync('nginx', ['-v']).status === 0) return true;
  if (process.env.CI === 'true') t.fail("nginx not found: install Debian's nginx package (.ci/run does)");
  else t.comment('SKIP: nginx not found (apt-get install nginx): deploy/nginx.conf was not run');
  return false;
}

/** deploy/nginx.conf in front of `upstreams`, as its own nginx process; resolves with its URL. */
async function startNginx(t: Test, upstreams: number[]): Promise<string> {
  const dir = tempDir(t);
  const port = await freePort();
  const [a, b] = upstreams;
  const conf = CONF.replace('server horologium-a:8080;', `server 127.0.0.1:${a};`)
    .replace('server horologium-b:8080;', `server 127.0.0.1:${b};`)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`);
  if (!conf.includes(`127.0.0.1:${a}`) || !conf.includes(`127.0.0.1:${b}`) || !conf.includes(`listen 127.0.0.1:${port}`)) throw new Error('deploy/nginx.conf changed shape');
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, conf);
  const globals = `daemon off; pid ${join(dir, 'nginx.pid')}; error_log ${join(dir, 'error.log')} warn;`;
  const check = spawnSync('nginx', ['-t', '-p', dir, '-c', file, '-g', globals], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`nginx -t: ${check.stderr}`);
  const child = spawn('nginx', ['-p', dir, '-c', file, '-g', globals], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  // Ready when it accepts a connection; an HTTP probe would already teach it which upstream is down.
  for (let k = 0; k < 100; k++) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (accepted) return url;
    await sleep(50);
  }
  throw new Error('nginx did not start');
}

const instancePort = (p: ServerProcess) => Number(new URL(p.url).port);
const kill = async (p: ServerProcess) => {
  p.child.kill('SIGKILL');
  await p.exited;
};

t.test('request ids, forwarded headers, WebSocket upgrades and keep-alive through nginx', async (t) => {
  if (!nginxAvailable(t)) return;
  const a = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const b = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const lb = await startNginx(t, [instancePort(a), instancePort(b)]);
  const api = client(lb);

  const given = await api.get('/v1/sessions/lb/events', { 'x-request-id': 'trace-from-client-1' });
  t.equal(given.status, 200);
  t.equal(given.headers.get('x-request-id'), 'trace-from-client-1', "the client's id comes back");
  const made = await api.get('/v1/sessions/lb/events');
  const id = made.headers.get('x-request-id') ?? '';
  t.match(id, /^[0-9a-f]{32}$/, "without one, nginx's $request_id is the request's id");
  await sleep(200);
  const logged = [...logLines(a.output()), ...logLines(b.output())].filter((l) => l.msg === 'request');
  t.ok(logged.some((l) => l.reqId === 'trace-from-client-1'), 'the server logged the client id');
  t.ok(logged.some((l) => l.reqId === id), "and nginx's");

  const c = await connect({ url: lb }, '?session=lb');
  t.equal((await c.next()).method, 'subscribed', 'a WebSocket upgrade goes through');
  t.equal((await api.post('/v1/sessions/lb/events', { type: 'a', data: {} })).status, 202);
  c.ws.close();
  await c.closed;
});

/** An upstream that takes a request and drops the connection without a reply, as an instance dying mid-request. */
async function droppingUpstream(t: Test): Promise<number> {
  const server = createServer((socket) => socket.once('data', () => socket.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return (server.address() as { port: number }).port;
}

const postEvent = (lb: string, k: number) =>
  fetch(`${lb}/v1/sessions/r/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'a', data: { k } }) });

t.test('an instance that refuses the connection: every request, POST included, goes to the other (nothing reached it)', async (t) => {
  if (!nginxAvailable(t)) return;
  const a = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const b = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const upstreams = [instancePort(a), instancePort(b)];
  await kill(b);
  const lb = await startNginx(t, upstreams);
  const gets = [];
  for (let k = 0; k < 4; k++) gets.push((await fetch(`${lb}/v1/sessions/r/events`)).status);
  t.same(gets, [200, 200, 200, 200]);
  const posts = [];
  for (let k = 0; k < 4; k++) posts.push((await postEvent(lb, k)).status);
  t.same(posts, [202, 202, 202, 202]);
  const stored = (await client(a.url).get('/v1/sessions/r/events')).json.events.map((e: any) => e.result.data.k);
  t.same(stored, [0, 1, 2, 3], 'each stored once, on the live instance');

  await kill(a);
  const none = await fetch(`${lb}/v1/sessions/r/events`);
  t.same(
    [none.status, await none.json(), none.headers.get('retry-after')],
    [502, { error: { code: 'UPSTREAM_UNAVAILABLE', message: 'No Horologium instance answered; retry shortly.', details: [] } }, '1'],
    "no instance at all: nginx's failure is the envelope, not an HTML page",
  );
  t.match(none.headers.get('x-request-id'), /^[0-9a-f]{32}$/, 'with its request id');
});

t.test('an instance that fails after taking the request: a GET is retried on the other, a POST is not', async (t) => {
  if (!nginxAvailable(t)) return;
  const a = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const upstreams = [await droppingUpstream(t), instancePort(a)];
  // A fresh nginx for each case, so that neither starts knowing the dropping one is bad.
  const forGets = await startNginx(t, upstreams);
  const gets = [];
  for (let k = 0; k < 2; k++) gets.push((await fetch(`${forGets}/v1/sessions/r/events`)).status);
  t.same(gets, [200, 200], 'the GET sent to the failing instance was retried');

  const forPosts = await startNginx(t, upstreams);
  const posts = [];
  for (let k = 0; k < 2; k++) {
    const r = await postEvent(forPosts, k);
    posts.push({ status: r.status, body: await r.json() });
  }
  t.same(posts.map((p) => p.status).sort(), [202, 502], 'the POST the failing instance took is not sent again: it may have been stored');
  t.match(posts.find((p) => p.status === 502)?.body, { error: { code: 'UPSTREAM_UNAVAILABLE' } });
});
