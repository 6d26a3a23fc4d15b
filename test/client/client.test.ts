/** The TypeScript client in Node against a real server that is stopped and started again. */
import t from 'tap';
import WebSocket from 'ws';
import { HorologiumClient, isToolCompleted, isToolStarting, type SessionChange, type StatusEvent } from '../../src/client/index.js';
import { SignJWT } from 'jose';
import { freePort } from '../helpers/process.js';
import { recordingClient } from '../helpers/recording-client.js';
import { restartableServer, startServer } from '../helpers/server.js';
import { sleep, until } from '../helpers/wait.js';

t.test('reconnects, resumes from its last seq, and sees every event exactly once', async (t) => {
  const server = await restartableServer(t);
  const { api, port } = server;
  for (let k = 1; k <= 3; k++) await api.post('/v1/sessions/cs/events', { type: 'n', data: { k } });
  const { client: c, events, subscribed } = recordingClient(t, `ws://127.0.0.1:${port}/v1/stream`);
  c.subscribe('cs', 0);
  await until(() => events.length === 3);
  await server.restart();
  for (let k = 4; k <= 6; k++) await api.post('/v1/sessions/cs/events', { type: 'n', data: { k } });
  await until(() => events.length >= 6);
  await new Promise((r) => setTimeout(r, 200));
  t.same(events.map((e) => e.seq), [1, 2, 3, 4, 5, 6]);
  t.equal(subscribed.length, 2, 'subscribed again after the reconnect');
  t.equal(subscribed[1]?.recovered, true);
  t.equal(c.lastSeq('cs'), 6);
});

t.test('with a token: auth first on every connection, a fresh token each time', async (t) => {
  const tokens = [{ token: 'client-subscribe-0123456789', scopes: ['subscribe' as const], sessions: ['ct'] }, { token: 'client-admin-0123456789012', scopes: ['admin' as const], sessions: ['*'] }];
  const server = await restartableServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const { api, port } = server;
  const admin = { authorization: 'Bearer client-admin-0123456789012' };
  let asked = 0;
  const events: StatusEvent[] = [];
  const c = new HorologiumClient({
    url: `ws://127.0.0.1:${port}/v1/stream`,
    WebSocket,
    token: async () => {
      asked++;
      return 'client-subscribe-0123456789';
    },
    onEvent: (e) => events.push(e),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  t.teardown(() => c.close());
  c.subscribe('ct', 0);
  await api.post('/v1/sessions/ct/events', { type: 'n', data: { k: 1 } }, admin);
  await until(() => events.length === 1);
  await server.restart();
  await api.post('/v1/sessions/ct/events', { type: 'n', data: { k: 2 } }, admin);
  await until(() => events.length === 2);
  t.same(events.map((e) => e.seq), [1, 2]);
  t.equal(asked, 2, 'the token function was asked at each connection');
});

t.test('callbacks: a URL that refuses, then the second URL; open, reconnecting, close, subscribed', async (t) => {
  const srv = await startServer(t);
  const dead = `ws://127.0.0.1:${await freePort()}/v1/stream`;
  const live = `${srv.url.replace('http', 'ws')}/v1/stream`;
  const log: string[] = [];
  const c = new HorologiumClient({
    url: [dead, live],
    WebSocket,
    onEvent: (e) => log.push(`event ${e.seq}`),
    onOpen: ({ url }) => log.push(`open ${url === live ? 'live' : url}`),
    onClose: ({ code, willReconnect }) => log.push(`close ${code} ${willReconnect}`),
    onReconnecting: ({ attempt, delayMs, url }) => log.push(`reconnecting ${attempt} ${url === live ? 'live' : url} ${delayMs <= 20}`),
    onSubscribed: (s) => log.push(`subscribed ${s.session} ${s.recovered}`),
    backoff: { initialMs: 20, maxMs: 20 },
  });
  t.teardown(() => c.close());
  c.subscribe('cb', 0);
  await until(() => log.includes('subscribed cb true'), 'the subscription on the second URL');
  await srv.post('/v1/sessions/cb/events', { type: 'n', data: {} });
  await until(() => log.includes('event 1'), 'the event');
  t.same(log, ['close 1006 true', 'reconnecting 1 live true', 'open live', 'subscribed cb true', 'event 1'], 'in this order, with a full-jitter delay within the bound');
});

t.test('a refused token surfaces as an error and a close that does not reconnect', async (t) => {
  const tokens = [{ token: 'client-good-token-0123456789', scopes: ['subscribe' as const], sessions: ['*'] }];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const errors: unknown[] = [];
  const closes: unknown[] = [];
  const c = new HorologiumClient({
    url: `${srv.url.replace('http', 'ws')}/v1/stream`,
    WebSocket,
    token: 'not-a-token-of-this-server',
    onEvent: () => undefined,
    onError: (e) => errors.push(e),
    onClose: (info) => closes.push(info),
    backoff: { initialMs: 20, maxMs: 20 },
  });
  t.teardown(() => c.close());
  await until(() => closes.length === 1, 'the close');
  await sleep(200);
  t.match(errors, [{ code: 'UNAUTHORIZED', message: /./ }], 'the panel can show why');
  t.match(closes, [{ code: 4001, willReconnect: false }], 'a static token would be refused again: no reconnect');
});

t.test('a JWT from a token function is refreshed before exp: the connection stays open across it', async (t) => {
  const secret = 's'.repeat(40);
  const tokens = [{ token: 'client-jwt-admin-0123456789', scopes: ['admin' as const], sessions: ['*'] }];
  const admin = { authorization: `Bearer ${tokens[0]!.token}` };
  const srv = await startServer(t, { auth: { tokens, jwtSecret: secret, open: false }, rateLimit: 0 });
  const key = new TextEncoder().encode(secret);
  let asked = 0;
  const firstExpiry = Math.floor(Date.now() / 1000) + 3;
  const token = async () => {
    asked++;
    return new SignJWT({ scope: 'subscribe publish', sessions: ['jwt'] }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(asked === 1 ? firstExpiry : '10m').sign(key);
  };
  const events: StatusEvent[] = [];
  const closes: unknown[] = [];
  const c = new HorologiumClient({ url: `${srv.url.replace('http', 'ws')}/v1/stream`, WebSocket, token, refreshBeforeMs: 1500, onEvent: (e) => events.push(e), onClose: (i) => closes.push(i) });
  t.teardown(() => c.close());
  c.subscribe('jwt', 0);
  await sleep(200);
  t.equal((await srv.post('/v1/sessions/jwt/events', { type: 'n', data: {} }, admin)).status, 202);
  await until(() => events.length === 1, 'the first event');
  await until(() => Date.now() / 1000 > firstExpiry + 1, 'past the first token’s exp', 6000);
  t.equal((await srv.post('/v1/sessions/jwt/events', { type: 'n', data: {} }, admin)).status, 202);
  await until(() => events.length === 2, 'an event after the first token expired');
  t.same(closes, [], 'never closed (no 4001 at expiry)');
  t.equal(asked, 2, 'asked once to connect, once to refresh');
});

t.test('a handler that throws is reported; the client and the process go on', async (t) => {
  const srv = await startServer(t);
  const seen: number[] = [];
  const reported: string[] = [];
  const c = new HorologiumClient({
    url: `${srv.url.replace('http', 'ws')}/v1/stream`,
    WebSocket,
    onEvent: (e) => {
      seen.push(e.seq);
      if (e.seq === 1) throw new Error('panel bug');
    },
    onHandlerError: (err, handler) => reported.push(`${handler}: ${(err as Error).message}`),
  });
  t.teardown(() => c.close());
  c.subscribe('throws', 0);
  await sleep(200);
  for (let k = 0; k < 3; k++) await srv.post('/v1/sessions/throws/events', { type: 'n', data: {} });
  await until(() => seen.length === 3, 'every event');
  t.same(seen, [1, 2, 3]);
  t.same(reported, ['onEvent: panel bug']);
});

t.test('a deleted session: unsubscribed reported, and the next incarnation followed from seq 1', async (t) => {
  const srv = await startServer(t);
  const events: Array<[number, unknown]> = [];
  const unsubscribed: unknown[] = [];
  const c = new HorologiumClient({
    url: `${srv.url.replace('http', 'ws')}/v1/stream`,
    WebSocket,
    onEvent: (e) => events.push([e.seq, (e.data as { k?: unknown }).k]),
    onUnsubscribed: (u) => unsubscribed.push(u),
  });
  t.teardown(() => c.close());
  c.subscribe('again', 0);
  await sleep(200);
  await srv.post('/v1/sessions/again/events', { type: 'n', data: { k: 'old' } });
  await until(() => events.length === 1, 'the first incarnation');
  await fetch(`${srv.url}/v1/sessions/again`, { method: 'DELETE' });
  await until(() => unsubscribed.length === 1, 'the deletion');
  await sleep(200);
  await srv.post('/v1/sessions/again/events', { type: 'n', data: { k: 'new' } });
  await until(() => events.length === 2, 'the next incarnation');
  t.same(unsubscribed, [{ session: 'again', reason: 'deleted' }]);
  t.same(events, [[1, 'old'], [1, 'new']]);
});

t.test('watchSessions: changes of the sessions under the prefix, kept across a reconnect, and deletions', async (t) => {
  const server = await restartableServer(t);
  const { api, port } = server;
  const changes: SessionChange[] = [];
  const c = new HorologiumClient({
    url: `ws://127.0.0.1:${port}/v1/stream`,
    WebSocket,
    onEvent: () => undefined,
    onSession: (s) => changes.push(s),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  t.teardown(() => c.close());
  c.watchSessions('team-a:');
  await sleep(200);
  await api.post('/v1/sessions/team-b:x/events', { type: 'n', data: {} });
  await api.post('/v1/sessions/team-a:x/events', { type: 'n', data: {} });
  await until(() => changes.length === 1, 'the first session');
  t.match(changes[0], { session: 'team-a:x', head: 1, deleted: undefined });
  await server.restart();
  await sleep(300);
  await api.post('/v1/sessions/team-a:y/events', { type: 'n', data: {} });
  await until(() => changes.some((s) => s.session === 'team-a:y'), 'watched again after the reconnect');
  await fetch(`${server.url}/v1/sessions/team-a:x`, { method: 'DELETE' });
  await until(() => changes.some((s) => s.deleted === true), 'the deletion');
  t.same(changes.find((s) => s.deleted), { session: 'team-a:x', deleted: true });
  t.notOk(changes.some((s) => s.session.startsWith('team-b:')), 'nothing outside the prefix');
  c.unwatchSessions();
  await sleep(200);
  const before = changes.length;
  await api.post('/v1/sessions/team-a:z/events', { type: 'n', data: {} });
  await sleep(1300);
  t.equal(changes.length, before, 'nothing after unwatchSessions');
});

t.test('status events are typed by their type: the guards narrow to the protocol’s data', async (t) => {
  const srv = await startServer(t);
  await srv.post('/v1/sessions/typed/tool-calls', { call_id: 'c1', name: 'grep', args: { q: 'x' } });
  await srv.post('/v1/sessions/typed/tool-results', { call_id: 'c1', name: 'grep', result: { content: 'found' }, execution_time: 0.25 });
  await srv.post('/v1/sessions/typed/events', { type: 'progress', data: { step: 1 } });
  const seen: string[] = [];
  const client = new HorologiumClient({
    url: `${srv.url.replace('http', 'ws')}/v1/stream`,
    WebSocket,
    onEvent: (e) => {
      // Each branch reads only what the protocol says its type carries (checked by the type checker).
      if (isToolStarting(e)) seen.push(`start ${e.data.name} ${e.data.call_id} ${e.data.args} ${JSON.stringify(e.data.arguments)}`);
      else if (isToolCompleted(e)) seen.push(`done ${e.data.name} ${e.data.is_error} ${e.data.execution_time} ${JSON.stringify(e.data.result)}`);
      else seen.push(`${e.type} ${JSON.stringify(e.data)}`);
    },
  });
  t.teardown(() => client.close());
  client.subscribe('typed', 0);
  await until(() => seen.length === 3);
  t.same(seen, ['start grep c1 {"q":"x"} {"q":"x"}', 'done grep false 0.25 "found"', 'progress {"step":1}']);
});
