/** Sessions over HTTP and the stream (docs/protocol.md section 9) against a real server on sqlite. */
import { join } from 'node:path';
import t from 'tap';
import { spawnServer } from '../helpers/process.js';
import { client, startServer, tempDir } from '../helpers/server.js';
import { connect } from '../helpers/ws-client.js';

const event = (k: number) => ({ type: 'note', data: { k } });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

t.test('GET /v1/sessions lists by last activity, pages, filters by prefix; GET one; 404 for none', async (t) => {
  const srv = await startServer(t);
  for (const s of ['a:1', 'b:1', 'a:2']) {
    t.equal((await srv.post(`/v1/sessions/${s}/events`, event(1))).status, 202);
    await new Promise((r) => setTimeout(r, 5));
  }
  await srv.post('/v1/sessions/a:1/tool-results', { call_id: 'c1', name: 'grep', result: 'x' });
  const list = await srv.get('/v1/sessions');
  t.equal(list.status, 200);
  t.same(list.json.sessions.map((s: any) => s.session), ['a:1', 'a:2', 'b:1']);
  t.equal(list.json.next, null);
  const top = list.json.sessions[0];
  t.same(Object.keys(top), ['session', 'epoch', 'head', 'oldest', 'queue_head', 'committed', 'created_at', 'last_event_at', 'open_calls', 'errors'], 'the summary members, in order (v1.2 adds the last two)');
  t.match(top, { session: 'a:1', head: 2, oldest: 1, queue_head: 1, committed: 0 });
  t.match(top.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.ok(Date.parse(top.last_event_at) >= Date.parse(top.created_at));
  const one = await srv.get('/v1/sessions/a:1');
  t.same(one.json, top, 'GET one is the list entry');
  const page1 = await srv.get('/v1/sessions?limit=2');
  t.same(page1.json.sessions.map((s: any) => s.session), ['a:1', 'a:2']);
  const page2 = await srv.get(`/v1/sessions?limit=2&cursor=${page1.json.next}`);
  t.same(page2.json.sessions.map((s: any) => s.session), ['b:1']);
  t.equal(page2.json.next, null);
  t.same((await srv.get('/v1/sessions?prefix=a:')).json.sessions.map((s: any) => s.session), ['a:1', 'a:2']);
  const missing = await srv.get('/v1/sessions/nope');
  t.equal(missing.status, 404);
  t.equal(missing.json.error.code, 'SESSION_NOT_FOUND');
  t.equal((await srv.get('/v1/sessions?limit=501')).status, 400, 'limit at most 500');
  t.equal((await srv.get('/v1/sessions?limit=0')).json.error.code, 'INVALID_QUERY');
  t.equal((await srv.get('/v1/sessions/nope/events')).status, 200, 'reading a session that does not exist');
  t.equal((await srv.get('/v1/sessions/nope')).status, 404, 'does not create it');
});

t.test('DELETE: admin only; subscribers are told; a later write starts at seq 1 with a new epoch', async (t) => {
  const tokens = [
    { token: 'admin-token-0123456789abcdef', scopes: ['admin' as const], sessions: ['*'] },
    { token: 'team-a-token-0123456789abcdef', scopes: ['publish' as const, 'subscribe' as const], sessions: ['team-a:*'] },
  ];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const admin = bearer(tokens[0]!.token);
  const teamA = bearer(tokens[1]!.token);
  for (const s of ['team-a:1', 'team-b:1']) await srv.post(`/v1/sessions/${s}/events`, event(1), admin);
  await srv.post('/v1/sessions/team-a:1/tool-results', { call_id: 'c1', name: 'grep', result: 'first' }, admin);
  t.same((await srv.get('/v1/sessions', teamA)).json.sessions.map((s: any) => s.session), ['team-a:1'], 'only what the token covers');
  t.equal((await srv.get('/v1/sessions/team-b:1', teamA)).status, 403);

  const sub = await connect(srv, '?session=team-a:1&since=0', teamA);
  t.teardown(() => sub.ws.close());
  const subscribed = await sub.next((f) => f.method === 'subscribed');
  await sub.next((f) => f.method === 'status' && f.result.seq === 2);

  const refused = await fetch(`${srv.url}/v1/sessions/team-a:1`, { method: 'DELETE', headers: teamA });
  t.equal(refused.status, 403, 'delete needs admin');
  const deleted = await fetch(`${srv.url}/v1/sessions/team-a:1`, { method: 'DELETE', headers: admin });
  t.equal(deleted.status, 200);
  t.same(await deleted.json(), { session: 'team-a:1', deleted: true });
  t.same(await sub.next((f) => f.method === 'unsubscribed'), { method: 'unsubscribed', result: { session: 'team-a:1', reason: 'deleted' } });
  t.equal((await fetch(`${srv.url}/v1/sessions/team-a:1`, { method: 'DELETE', headers: admin })).status, 404, 'gone');
  t.equal((await srv.get('/v1/sessions/team-a:1', admin)).status, 404);

  const again = await srv.post('/v1/sessions/team-a:1/tool-results', { call_id: 'c1', name: 'grep', result: 'second' }, admin);
  t.equal(again.status, 202, 'the call_id may be used again');
  t.same(again.json, { call_id: 'c1', queue_seq: 1, event_seq: 1, duplicate: false });
  t.equal(sub.frames.filter((f) => f.method === 'status' && f.result.seq === 1 && f.result.data.result === 'second').length, 0, 'the old subscription ended: nothing more on it');
  const resumed = await connect(srv, `?session=team-a:1&since=2&epoch=${subscribed.result.epoch}`, teamA);
  t.teardown(() => resumed.ws.close());
  const r = await resumed.next((f) => f.method === 'subscribed');
  t.equal(r.result.recovered, false, 'the old epoch does not resume');
  t.not(r.result.epoch, subscribed.result.epoch);
  const first = await resumed.next((f) => f.method === 'status');
  t.match(first.result, { seq: 1, data: { result: 'second' } }, 'the new incarnation from seq 1');
  const q = await srv.get('/v1/sessions/team-a:1/queue', admin);
  t.same([q.json.head, q.json.oldest, q.json.entries.map((e: any) => e.result)], [1, 1, ['second']]);
});

t.test('a real process with HOROLOGIUM_SESSION_TTL=1s deletes an idle session by itself, and says so', async (t) => {
  const server = await spawnServer(t, { HOROLOGIUM_STORE: `sqlite:${join(tempDir(t), 'ttl.db')}`, HOROLOGIUM_SESSION_TTL: '1s', LOG_LEVEL: 'warn' });
  const api = client(server.url);
  await api.post('/v1/sessions/idle/tool-results', { call_id: 'c1', name: 'grep', result: 'never acknowledged' });
  const sub = await connect(server, '?session=idle&since=0');
  t.teardown(() => sub.ws.close());
  await sub.next((f) => f.method === 'status');
  const started = Date.now();
  t.same(await sub.next((f) => f.method === 'unsubscribed', 4000), { method: 'unsubscribed', result: { session: 'idle', reason: 'deleted' } });
  t.ok(Date.now() - started < 3000, `deleted about a second after its last event (${Date.now() - started} ms after subscribing)`);
  t.equal((await api.get('/v1/sessions/idle')).status, 404, 'unacknowledged entries and all');
  t.match((await api.get('/metrics')).text, /^horologium_retention_sessions_removed_total 1$/m);
});

t.test('v1.2: open_calls and errors in every summary; GET /v1/sessions?state=running|failed|idle, anything else 400', async (t) => {
  const srv = await startServer(t);
  await srv.post('/v1/sessions/st-run/tool-calls', { call_id: 'c1', name: 'grep', args: {} });
  await srv.post('/v1/sessions/st-fail/tool-calls', { call_id: 'c1', name: 'grep', args: {} });
  await srv.post('/v1/sessions/st-fail/tool-results', { call_id: 'c1', name: 'grep', result: 'boom', is_error: true });
  await srv.post('/v1/sessions/st-idle/tool-results', { call_id: 'c1', name: 'grep', result: 'ok' });
  const one = (await srv.get('/v1/sessions/st-fail')).json;
  t.same([one.open_calls, one.errors], [0, 1], 'one session: its counts');
  for (const [state, expected] of [
    ['running', ['st-run']],
    ['failed', ['st-fail']],
    ['idle', ['st-idle']],
  ] as const) {
    const page = (await srv.get(`/v1/sessions?state=${state}`)).json;
    t.same(page.sessions.map((s: any) => s.session), expected, `state=${state}`);
  }
  const all = (await srv.get('/v1/sessions')).json.sessions.map((s: any) => [s.session, s.open_calls, s.errors]);
  t.same(all.sort(), [['st-fail', 0, 1], ['st-idle', 0, 0], ['st-run', 1, 0]], 'every summary of the list carries both');
  for (const bad of ['busy', 'RUNNING', '']) {
    const r = await srv.get(`/v1/sessions?state=${bad}`);
    t.same([r.status, r.json.error.code], [400, 'INVALID_QUERY'], `state=${bad}: 400`);
  }
});
