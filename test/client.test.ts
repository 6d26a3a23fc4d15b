/** The TypeScript client in Node against a real server that is stopped and started again. */
import t from 'tap';
import WebSocket from 'ws';
import { HorologiumClient, type StatusEvent, type SubscribedInfo } from '../src/client/index.js';
import { restartableServer } from './helpers/server.js';
import { until } from './helpers/wait.js';

t.test('reconnects, resumes from its last seq, and sees every event exactly once', async (t) => {
  const server = await restartableServer(t);
  const { api, port } = server;
  for (let k = 1; k <= 3; k++) await api.post('/v1/sessions/cs/events', { type: 'n', data: { k } });
  const events: StatusEvent[] = [];
  const subscribed: SubscribedInfo[] = [];
  const c = new HorologiumClient({
    url: `ws://127.0.0.1:${port}/v1/stream`,
    WebSocket: WebSocket as never,
    onEvent: (e) => events.push(e),
    onSubscribed: (s) => subscribed.push(s),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  t.teardown(() => c.close());
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
    WebSocket: WebSocket as never,
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
