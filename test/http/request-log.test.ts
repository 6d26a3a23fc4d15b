/**
 * What an operator reads, from the real process's stdout: request ids (kept from X-Request-Id or
 * generated, echoed, on the request line), probes at debug, the error code and session on a 4xx
 * line, the start-up line, a warning for an unknown HOROLOGIUM_* variable; and a metrics label
 * that a producer cannot multiply.
 */
import t from 'tap';
import { logLines, spawnServer } from '../helpers/process.js';
import { client, startServer } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;


t.test('request ids: a well-formed X-Request-Id is kept and echoed, else a UUID is made; the log line carries it', async (t) => {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  const api = client(proc.url);
  const given = await api.post('/v1/sessions/rid/events', { type: 'a', data: {} }, { 'x-request-id': 'trace-abc.123' });
  t.equal(given.headers.get('x-request-id'), 'trace-abc.123');
  const made = [await api.get('/v1/sessions/rid/events'), await api.get('/v1/sessions/rid/events')].map((r) => r.headers.get('x-request-id') ?? '');
  t.match(made[0], UUID);
  t.not(made[0], made[1], 'unique per request');
  const bad = await api.get('/v1/sessions/rid/events', { 'x-request-id': 'has spaces and <markup>' });
  t.match(bad.headers.get('x-request-id'), UUID, 'a malformed id is replaced, not echoed');
  const error = await api.post('/v1/sessions/rid/events', { type: 'Bad Type', data: {} }, { 'x-request-id': 'req-4xx' });
  t.equal(error.status, 400);
  t.equal(error.headers.get('x-request-id'), 'req-4xx', 'error replies carry it too');
  await sleep(200);
  const requestLines = logLines(proc.output()).filter((l) => l.msg === 'request');
  t.match(requestLines.find((l) => l.reqId === 'trace-abc.123'), { route: '/v1/sessions/:session/events', status: 202, session: 'rid' });
  t.ok(requestLines.some((l) => l.reqId === made[0]), 'the generated id is the logged one');
  t.match(requestLines.find((l) => l.reqId === 'req-4xx'), { status: 400, error: 'INVALID_BODY', session: 'rid' }, 'a 4xx line names its code and session');
});

t.test('probes are logged at debug only; the start-up line says address, store and auth', async (t) => {
  const info = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:' });
  await fetch(`${info.url}/readyz`);
  await fetch(`${info.url}/v1/sessions`);
  await sleep(200);
  const infoLines = logLines(info.output());
  t.same(infoLines.filter((l) => l.route === '/healthz' || l.route === '/readyz'), [], 'no probe line at info');
  t.ok(infoLines.some((l) => l.route === '/v1/sessions'), 'other requests are');
  t.match(infoLines.find((l) => l.msg === 'horologium ready'), { address: info.url, store: 'memory', auth: 'off' });
  const debug = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', LOG_LEVEL: 'debug' });
  await fetch(`${debug.url}/readyz`);
  await sleep(200);
  t.ok(logLines(debug.output()).some((l) => l.route === '/readyz' && l.level === 20), 'at debug, probes are logged');
});

t.test('an unknown HOROLOGIUM_* variable is warned about, with the nearest real one', async (t) => {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', HOROLOGIUM_TOKEN: 'meant-to-be-a-secret', HOROLOGIUM_CLIENT_URL: 'http://127.0.0.1:1', HOROLOGIUM_ZZZZZZZZZZZZZZZZZZZZ: '1' });
  await sleep(200);
  const warnings = logLines(proc.output()).filter((l) => l.level === 40);
  t.match(warnings.find((l) => l.variable === 'HOROLOGIUM_TOKEN'), { suggestion: 'HOROLOGIUM_TOKENS', msg: 'unknown setting HOROLOGIUM_TOKEN is ignored; did you mean HOROLOGIUM_TOKENS?' });
  t.match(warnings.find((l) => l.variable === 'HOROLOGIUM_ZZZZZZZZZZZZZZZZZZZZ'), { msg: 'unknown setting HOROLOGIUM_ZZZZZZZZZZZZZZZZZZZZ is ignored' });
  t.notOk(warnings.some((l) => l.variable === 'HOROLOGIUM_CLIENT_URL'), "the CLI's own variables are not the server's business");
  t.notMatch(proc.output(), /meant-to-be-a-secret/, 'the value is never logged');
});

t.test('1,000 producer-chosen event types add no metric series', async (t) => {
  const srv = await startServer(t);
  const series = async () => (await srv.get('/metrics')).text.split('\n').filter((l) => l.startsWith('horologium_events_appended_total{'));
  await srv.post('/v1/sessions/mt/tool-calls', { call_id: 'c', name: 'n' });
  await srv.post('/v1/sessions/mt/events', { type: 'first', data: {} });
  const before = await series();
  for (let k = 0; k < 1000; k++) await srv.post('/v1/sessions/mt/events', { type: `t_${k}_${Math.random().toString(36).slice(2, 8)}`, data: {} });
  const after = await series();
  t.same(after.map((l) => l.split(' ')[0]), before.map((l) => l.split(' ')[0]), 'the same series');
  t.same(after.map((l) => l.split(' ')[0]).sort(), ['horologium_events_appended_total{type="other"}', 'horologium_events_appended_total{type="tool_starting"}']);
  t.ok(after.includes('horologium_events_appended_total{type="other"} 1001'), 'every other type counted under other');
});

t.test('LOG_FORMAT=pretty: lines for a person (pino-pretty as a transport), no JSON', async (t) => {
  const proc = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', LOG_FORMAT: 'pretty' });
  await client(proc.url).post('/v1/sessions/pretty/events', { type: 'a', data: {} });
  await sleep(300);
  proc.child.kill('SIGTERM');
  await proc.exited;
  const out = proc.output();
  t.match(out, /INFO.*horologium ready/, 'the start-up line, with its level in words');
  t.match(out, /INFO.*request/, 'the request line');
  t.match(out, /route: "\/v1\/sessions\/:session\/events"/, 'its fields, one per line');
  t.same(logLines(out), [], 'and not one JSON line');
});
