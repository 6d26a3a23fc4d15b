/** Operations: health, readiness, metrics, OpenAPI, the per-request log line and SIGTERM. */
import t from 'tap';
import { upgradeOutcome } from '../helpers/ws-client.js';
import { startServer, client } from '../helpers/server.js';
import { spawnServer } from '../helpers/process.js';

t.test('healthz, readyz, openapi, metrics', async (t) => {
  const srv = await startServer(t);
  t.same((await srv.get('/healthz')).json, { status: 'ok' });
  t.same((await srv.get('/readyz')).json, { status: 'ready', store: 'sqlite', warnings: [] });
  const openapi = await srv.get('/openapi.json');
  t.equal(openapi.json.openapi, '3.1.0');
  t.ok(openapi.json.paths['/v1/sessions/{session}/tool-results'].post);
  await srv.post('/v1/sessions/m/tool-results', { call_id: 'c', name: 'n', result: 1 });
  await srv.post('/v1/sessions/m/tool-results', { call_id: 'd', name: 'n', result: 2 });
  await srv.post('/v1/sessions/m/queue/ack', { through: 1 });
  const metrics = (await srv.get('/metrics')).text;
  t.match(metrics, /horologium_http_requests_total\{route="\/v1\/sessions\/:session\/tool-results",method="POST",status="202"\} 2/);
  t.match(metrics, /horologium_events_appended_total\{type="tool_completed"\} 2/);
  t.match(metrics, /horologium_queue_depth 1/);
  t.match(metrics, /horologium_ingest_duration_seconds_count 2/);
  t.match(metrics, /^process_cpu_seconds_total /m, "Node's default metrics under their standard names");
  t.notMatch(metrics, /horologium_process_|horologium_nodejs_/);
});

t.test('readyz is 503 when the store cannot take writes', async (t) => {
  const srv = await startServer(t);
  await srv.app.horologium.store.close();
  const r = await srv.get('/readyz');
  t.equal(r.status, 503);
  const w = await srv.post('/v1/sessions/x/events', { type: 'a', data: {} });
  t.same([w.status, w.json.error.code, w.headers.get('retry-after')], [503, 'STORE_UNAVAILABLE', '1']);
});

t.test('one log line per request, with session and call_id, never a body or token', async (t) => {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const api = client(proc.url);
  await api.post('/v1/sessions/logs/tool-results', { call_id: 'c-log', name: 'n', result: { content: 'SECRET-RESULT-BODY' } }, { authorization: 'Bearer SECRET-TOKEN-1' });
  await api.get('/v1/sessions/logs/events?token=SECRET-TOKEN-2');
  await new Promise((r) => setTimeout(r, 200));
  const lines = proc.output().split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l)).filter((l) => l.route !== '/healthz');
  t.equal(lines.length, 2);
  t.match(lines[0], { method: 'POST', route: '/v1/sessions/:session/tool-results', status: 202, session: 'logs', call_id: 'c-log' });
  t.type(lines[0].req_bytes, 'number');
  t.type(lines[0].res_bytes, 'number');
  t.notMatch(proc.output(), /SECRET/);
  proc.child.kill('SIGTERM');
  t.equal((await proc.exited).code, 0);
});

t.test('with auth on, no token reaches the log: header, query or stream, accepted or refused', async (t) => {
  const tokens = [{ token: 'SECRET-GOOD-TOKEN-0123456789', scopes: ['admin'], sessions: ['*'] }];
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', HOROLOGIUM_TOKENS: JSON.stringify(tokens), LOG_LEVEL: 'trace' });
  const api = client(proc.url);
  t.equal((await api.post('/v1/sessions/l/events', { type: 'a', data: {} }, { authorization: 'Bearer SECRET-GOOD-TOKEN-0123456789' })).status, 202);
  t.equal((await api.get('/v1/sessions/l/events', { authorization: 'Bearer SECRET-BAD-TOKEN-1' })).status, 401);
  t.equal(await upgradeOutcome(proc, '?token=SECRET-BAD-TOKEN-2'), 401);
  t.equal(await upgradeOutcome(proc, '?token=SECRET-GOOD-TOKEN-0123456789&session=l'), 'open');
  await new Promise((r) => setTimeout(r, 300));
  t.match(proc.output(), /"msg":"request"/, 'the requests were logged');
  t.notMatch(proc.output(), /SECRET/);
});

t.test('SIGTERM finishes the in-flight long-poll and exits', async (t) => {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const api = client(proc.url);
  const poll = api.get('/v1/sessions/x/queue?wait=30');
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  proc.child.kill('SIGTERM');
  const r = await poll;
  t.equal(r.status, 200, 'the long-poll is answered, not cut');
  t.same(r.json.entries, []);
  t.equal((await proc.exited).code, 0);
  t.ok(Date.now() - started < 10_000, 'without waiting out the poll');
});
