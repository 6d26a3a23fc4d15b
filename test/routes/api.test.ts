/** The HTTP API of docs/protocol.md section 4 against a real listening server on a real sqlite file. */
import t from 'tap';
import { startServer } from '../helpers/server.js';

const S = '/v1/sessions/s1';

t.test('tool-calls then tool-results: events, queue and replies', async (t) => {
  const srv = await startServer(t);
  const call = await srv.post(`${S}/tool-calls`, '{"call_id":"c1","name":"grep","args":{"q":"x","n":12345678901234567890}}');
  t.equal(call.status, 202);
  t.same(call.json, { event_seq: 1 });
  const resultJson = '{"content":"found","big":12345678901234567890123,"2":1,"1":1.50,"e":1e3}';
  const res = await srv.post(`${S}/tool-results`, `{"call_id":"c1","name":"grep","result":${resultJson}}`);
  t.equal(res.status, 202);
  t.same(res.json, { call_id: 'c1', queue_seq: 1, event_seq: 2, duplicate: false });

  const events = await srv.get(`${S}/events?after=0`);
  t.equal(events.status, 200);
  t.match(events.json, { session: 's1', head: 2, oldest: 1 });
  const [starting, completed] = events.json.events;
  t.same(Object.keys(starting.result), ['type', 'data', 'timestamp', 'uuid', 'session', 'seq']);
  t.same(starting.result.data, { name: 'grep', call_id: 'c1', args: '{"q":"x","n":12345678901234567890}', arguments: { q: 'x', n: 12345678901234567890 } });
  t.ok(events.text.includes('"arguments":{"q":"x","n":12345678901234567890}'), 'big integer kept in arguments');
  t.equal(completed.result.type, 'tool_completed');
  t.equal(completed.result.data.result, 'found');
  t.equal(completed.result.data.is_error, false);
  t.type(completed.result.data.execution_time, 'number', 'measured from tool-calls');
  t.ok(completed.result.data.execution_time >= 0);
  t.same(completed.result.data.arguments, starting.result.data.arguments, 'arguments from the earlier tool-calls');
  t.ok(completed.result.timestamp > 1.7e9 && completed.result.timestamp < 1e11, 'float seconds');

  const queue = await srv.get(`${S}/queue`);
  t.equal(queue.status, 200);
  t.ok(queue.text.includes(`"result":${resultJson}`), 'result byte for byte');
  t.ok(queue.text.includes(`"args":{"q":"x","n":12345678901234567890}`), 'args from tool-calls, byte for byte');
  const entry = queue.json.entries[0];
  t.equal(entry.message.content, resultJson, 'message.content is the JSON text');
  t.same([entry.message.role, entry.message.tool_call_id, entry.queue_seq, entry.call_id, entry.name], ['tool', 'c1', 1, 'c1', 'grep']);
  t.match(entry.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.same([queue.json.session, queue.json.committed, queue.json.head], ['s1', 0, 1]);
});

t.test('idempotency: duplicate 200, conflict 409, execution_time and is_error not compared', async (t) => {
  const srv = await startServer(t);
  const body = { call_id: 'c1', name: 'n', result: { a: 1 }, args: { x: 1 }, execution_time: 0.5, is_error: false };
  t.equal((await srv.post(`${S}/tool-results`, body)).status, 202);
  const dup = await srv.post(`${S}/tool-results`, { ...body, execution_time: 9, is_error: true });
  t.equal(dup.status, 200);
  t.same(dup.json, { call_id: 'c1', queue_seq: 1, event_seq: 1, duplicate: true });
  for (const change of [{ result: { a: 2 } }, { name: 'm' }, { args: { x: 2 } }, { args: undefined }]) {
    const clash = await srv.post(`${S}/tool-results`, { ...body, ...change });
    t.equal(clash.status, 409, JSON.stringify(change));
    t.equal(clash.json.error.code, 'CALL_ID_CONFLICT');
  }
  const spaced = await srv.post(`${S}/tool-results`, '{ "call_id": "c1", "name": "n", "result": { "a" : 1 }, "args": {"x":1} }');
  t.equal(spaced.status, 200, 'compared as JSON text: whitespace does not matter');
  t.equal((await srv.get(`${S}/queue`)).json.head, 1, 'stored once');
  t.equal((await srv.get(`${S}/events`)).json.head, 1, 'published once');
});

t.test('tool_completed data: producer time, is_error, body args, preview', async (t) => {
  const srv = await startServer(t, { previewLimit: 10 });
  await srv.post(`${S}/tool-results`, '{"call_id":"c","name":"sh","result":"0123456789abc","args":{"cmd":"0123456789abc"},"execution_time":1.50,"is_error":true}');
  const events = await srv.get(`${S}/events`);
  t.ok(events.text.includes('"execution_time":1.50,"is_error":true,"result":"0123456...","arguments":{"cmd":"0123456..."},"result_bytes":15,"truncated":true}'));
  await srv.post(`${S}/tool-results`, '{"call_id":"d","name":"sh","result":null}');
  const last = (await srv.get(`${S}/events?after=1`)).json.events[0].result.data;
  t.same(last, { name: 'sh', call_id: 'd', execution_time: null, is_error: false, result: '', arguments: null, result_bytes: 4, truncated: false });
  const q = (await srv.get(`${S}/queue?after=1`)).json.entries[0];
  t.same([q.args, q.result, q.execution_time, q.message.content], [null, null, null, 'null']);
});

t.test('tool_starting without args', async (t) => {
  const srv = await startServer(t);
  await srv.post(`${S}/tool-calls`, { call_id: 'c', name: 'ls' });
  const ev = (await srv.get(`${S}/events`)).json.events[0].result;
  t.same(ev.data, { name: 'ls', call_id: 'c', args: '', arguments: null });
  const again = await srv.post(`${S}/tool-calls`, { call_id: 'c', name: 'ls' });
  t.same([again.status, again.json], [200, { event_seq: 1, duplicate: true }]);
  t.equal((await srv.post(`${S}/tool-calls`, { call_id: 'c', name: 'rm' })).status, 409);
});

t.test('generic events are kept as sent', async (t) => {
  const srv = await startServer(t);
  const r = await srv.post(`${S}/events`, '{"type":"thinking","data":{"b":12345678901234567890123,"1":"\\ud800","a":1.0}}');
  t.same([r.status, r.json], [202, { event_seq: 1 }]);
  const events = await srv.get(`${S}/events`);
  t.ok(events.text.includes('"type":"thinking","data":{"b":12345678901234567890123,"1":"\ufffd","a":1.0}'));
  for (const type of ['tool_starting', 'tool_completed']) {
    const reserved = await srv.post(`${S}/events`, { type, data: {} });
    t.same([reserved.status, reserved.json.error.code], [400, 'RESERVED_EVENT_TYPE']);
  }
  for (const bad of [{ type: 'Bad', data: {} }, { type: 'x', data: [] }, { type: 'x', data: 'y' }, { type: 'x' }, { data: {} }, { type: 'a'.repeat(65), data: {} }]) {
    const r = await srv.post(`${S}/events`, bad);
    t.same([r.status, r.json.error.code], [400, 'INVALID_BODY'], JSON.stringify(bad));
  }
  t.equal((await srv.get(`${S}/events`)).json.head, 1, 'nothing stored by rejected requests');
});

t.test('event_id: a retry is stored once (200 duplicate), a clash is 409, a bad key 400', async (t) => {
  const srv = await startServer(t);
  const first = await srv.post(`${S}/events`, '{"type":"progress","data":{"n":12345678901234567890},"event_id":"e-1"}');
  t.same([first.status, first.json], [202, { event_seq: 1 }]);
  const retry = await srv.post(`${S}/events`, '{"event_id":"e-1","data":{"n":12345678901234567890},"type":"progress"}');
  t.same([retry.status, retry.json], [200, { event_seq: 1, duplicate: true }], 'the same event again, fields in another order');
  const other = await srv.post(`${S}/events`, { type: 'progress', data: { n: 2 }, event_id: 'e-2' });
  t.same([other.status, other.json], [202, { event_seq: 2 }], 'another key is another event');
  const clash = await srv.post(`${S}/events`, { type: 'progress', data: { n: 3 }, event_id: 'e-1' });
  t.equal(clash.status, 409);
  t.equal(clash.json.error.code, 'EVENT_ID_CONFLICT');
  t.match(clash.json.error.message, /e-1/, 'the message names the key');
  const otherType = await srv.post(`${S}/events`, { type: 'note', data: { n: 12345678901234567890n.toString() }, event_id: 'e-1' });
  t.same([otherType.status, otherType.json.error.code], [409, 'EVENT_ID_CONFLICT'], 'another type under the same key');
  const elsewhere = await srv.post('/v1/sessions/s2/events', { type: 'progress', data: { n: 3 }, event_id: 'e-1' });
  t.same([elsewhere.status, elsewhere.json], [202, { event_seq: 1 }], 'keys are per session');
  for (const bad of ['', 'a\nb', 'x'.repeat(257), 7, null]) {
    const r = await srv.post(`${S}/events`, { type: 'progress', data: {}, event_id: bad });
    t.same([r.status, r.json.error.code], [400, 'INVALID_BODY'], `event_id ${JSON.stringify(bad)}`);
    t.ok(r.json.error.message.length > 0);
  }
  t.ok((await srv.post(`${S}/events`, { type: 'progress', data: {}, event_id: 'x'.repeat(256) })).status === 202, '256 characters are accepted');
  const log = (await srv.get(`${S}/events`)).json;
  t.equal(log.head, 3, 'each accepted event once; retries, clashes and rejects stored nothing');
  t.same(log.events.map((e: { result: { type: string } }) => e.result.type), ['progress', 'progress', 'progress']);
});

t.test('every error is the envelope with a 4xx, and stores nothing', async (t) => {
  const srv = await startServer(t, { bodyLimit: 65_536 });
  const cases: Array<[string, () => Promise<{ status: number; json: any }>, number, string]> = [
    ['invalid JSON', () => srv.post(`${S}/tool-results`, '{"call_id":'), 400, 'INVALID_JSON'],
    ['empty body', () => srv.post(`${S}/tool-results`, ''), 400, 'INVALID_JSON'],
    ['not an object', () => srv.post(`${S}/tool-results`, '[1]'), 400, 'INVALID_BODY'],
    ['missing result', () => srv.post(`${S}/tool-results`, { call_id: 'c', name: 'n' }), 400, 'INVALID_BODY'],
    ['missing call_id', () => srv.post(`${S}/tool-results`, { name: 'n', result: 1 }), 400, 'INVALID_BODY'],
    ['empty call_id', () => srv.post(`${S}/tool-results`, { call_id: '', name: 'n', result: 1 }), 400, 'INVALID_BODY'],
    ['long call_id', () => srv.post(`${S}/tool-results`, { call_id: 'x'.repeat(257), name: 'n', result: 1 }), 400, 'INVALID_BODY'],
    ['control in call_id', () => srv.post(`${S}/tool-results`, { call_id: 'a\nb', name: 'n', result: 1 }), 400, 'INVALID_BODY'],
    ['wrong types', () => srv.post(`${S}/tool-results`, { call_id: 1, name: 'n', result: 1, is_error: 'yes' }), 400, 'INVALID_BODY'],
    ['negative time', () => srv.post(`${S}/tool-results`, { call_id: 'c', name: 'n', result: 1, execution_time: -1 }), 400, 'INVALID_BODY'],
    ['huge exponent time', () => srv.post(`${S}/tool-results`, '{"call_id":"c","name":"n","result":1,"execution_time":1e400}'), 400, 'INVALID_BODY'],
    ['too deep', () => srv.post(`${S}/tool-results`, `{"call_id":"c","name":"n","result":${'['.repeat(20_000)}${']'.repeat(20_000)}}`), 400, 'NESTING_TOO_DEEP'],
    ['too large', () => srv.post(`${S}/tool-results`, { call_id: 'c', name: 'n', result: 'x'.repeat(70_000) }), 413, 'BODY_TOO_LARGE'],
    ['wrong content type', () => srv.post(`${S}/tool-results`, '{}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['bad session id', () => srv.post('/v1/sessions/-bad/tool-results', { call_id: 'c', name: 'n', result: 1 }), 400, 'INVALID_SESSION_ID'],
    ['long session id', () => srv.post(`/v1/sessions/${'a'.repeat(129)}/tool-results`, { call_id: 'c', name: 'n', result: 1 }), 400, 'INVALID_SESSION_ID'],
    ['bad query', () => srv.get(`${S}/queue?limit=1001`), 400, 'INVALID_QUERY'],
    ['bad wait', () => srv.get(`${S}/queue?wait=61`), 400, 'INVALID_QUERY'],
    ['bad after', () => srv.get(`${S}/events?after=-1`), 400, 'INVALID_QUERY'],
    ['bad ack', () => srv.post(`${S}/queue/ack`, { through: 1.5 }), 400, 'INVALID_BODY'],
    ['ack beyond head', () => srv.post(`${S}/queue/ack`, { through: 1 }), 409, 'ACK_BEYOND_HEAD'],
    ['unknown route', () => srv.get('/v1/nothing'), 404, 'NOT_FOUND'],
  ];
  for (const [name, send, status, code] of cases) {
    const r = await send();
    t.equal(r.status, status, `${name}: status`);
    t.equal(r.json?.error?.code, code, `${name}: code`);
    t.type(r.json?.error?.message, 'string', `${name}: message`);
    t.ok(Array.isArray(r.json?.error?.details), `${name}: details`);
  }
  t.equal((await srv.get(`${S}/queue?after=0`)).json.head, 0, 'nothing stored');
  t.equal((await srv.get(`${S}/events`)).json.head, 0, 'nothing published');

  // Messages for people, naming the field and its rule (never zod's wording), and the limit.
  const message = async (r: Promise<{ json: any }>) => (await r).json.error.message;
  t.equal(await message(srv.post(`${S}/tool-results`, { call_id: '', name: 'n', result: 1 })), 'Invalid body: call_id must be 1 to 256 characters without control characters.');
  t.equal(await message(srv.post(`${S}/tool-results`, { name: 'n', result: 1 })), 'Invalid body: call_id is required: must be 1 to 256 characters without control characters.');
  t.equal(await message(srv.post(`${S}/tool-results`, { call_id: 'c', name: 'n' })), 'Invalid body: result is required.');
  t.equal(await message(srv.post(`${S}/events`, { type: 'Bad', data: {} })), 'Invalid body: type must be 1 to 64 lowercase letters, digits or underscores, starting with a letter.');
  t.equal(await message(srv.get(`${S}/queue?limit=1001`)), 'Invalid query: limit must be a whole number from 1 to 1000.');
  t.equal(await message(srv.get(`${S}/queue?wait=61`)), 'Invalid query: wait must be a number of seconds from 0 to 60 (at most 6 decimals).');
  t.equal(await message(srv.post(`${S}/queue/ack`, { through: 1.5 })), 'Invalid body: through must be a whole number from 0 to 9007199254740991.');
  t.equal(
    await message(srv.post(`${S}/tool-results`, { call_id: 'c', name: 'n', result: 'x'.repeat(70_000) })),
    'The request body is larger than the limit of 65536 bytes (64 KiB, HOROLOGIUM_BODY_LIMIT).',
  );
});

t.test('a 10,000-deep result and a 12 MiB result are stored whole', async (t) => {
  const srv = await startServer(t);
  const deep = '['.repeat(10_000) + '12345678901234567890123' + ']'.repeat(10_000);
  t.equal((await srv.post(`${S}/tool-results`, `{"call_id":"deep","name":"x","result":${deep}}`)).status, 202);
  const big = `{"content":"${'é'.repeat(6 * 1024 * 1024)}","n":1.50}`;
  t.equal((await srv.post(`${S}/tool-results`, `{"call_id":"big","name":"x","result":${big}}`)).status, 202);
  const q = await srv.get(`${S}/queue?after=0`);
  t.ok(q.text.includes(`"result":${deep}`), 'deep result byte for byte');
  t.equal(q.json.entries[1].message.content, big, 'big result byte for byte');
  const ev = (await srv.get(`${S}/events?after=1`)).json.events[0].result.data.result;
  t.equal([...ev].length, 4000, 'the preview is truncated');
});

t.test('queue read: after, limit, long-poll wait and ack', async (t) => {
  const srv = await startServer(t);
  for (let k = 1; k <= 5; k++) await srv.post(`${S}/tool-results`, { call_id: `c${k}`, name: 'n', result: k });
  const page = await srv.get(`${S}/queue?after=1&limit=2`);
  t.same(page.json.entries.map((e: any) => e.queue_seq), [2, 3]);
  t.same((await srv.post(`${S}/queue/ack`, { through: 4 })).json, { committed: 4 });
  t.same((await srv.post(`${S}/queue/ack`, { through: 2 })).json, { committed: 4 });
  t.same((await srv.get(`${S}/queue`)).json.entries.map((e: any) => e.queue_seq), [5]);
  await srv.post(`${S}/queue/ack`, { through: 5 });
  const started = Date.now();
  const waiting = srv.get(`${S}/queue?wait=10`);
  await new Promise((r) => setTimeout(r, 200));
  await srv.post(`${S}/tool-results`, { call_id: 'c6', name: 'n', result: 6 });
  const woke = await waiting;
  t.same(woke.json.entries.map((e: any) => e.queue_seq), [6], 'woken by the new entry');
  t.ok(Date.now() - started < 9000, 'before the deadline');
  const empty = await srv.get('/v1/sessions/other/queue?wait=0.3');
  t.same(empty.json, { session: 'other', committed: 0, head: 0, oldest: 0, entries: [] }, 'an empty read after the wait');
});

t.test('HTTP replay: after and limit', async (t) => {
  const srv = await startServer(t, { historySize: 3 });
  for (let k = 1; k <= 5; k++) await srv.post(`${S}/events`, { type: 'n', data: { k } });
  const page = await srv.get(`${S}/events?after=0&limit=2`);
  t.match(page.json, { head: 5, oldest: 3 });
  t.same(page.json.events.map((e: any) => e.result.seq), [3, 4]);
  t.same((await srv.get(`${S}/events?after=4`)).json.events.map((e: any) => e.result.data.k), [5]);
  const uuids = (await srv.get(`${S}/events`)).json.events.map((e: any) => e.result.uuid);
  t.same((await srv.get(`${S}/events`)).json.events.map((e: any) => e.result.uuid), uuids, 'uuids stable across replay');
});

t.test('a known path with another method is 405 with Allow; an unknown path 404', async (t) => {
  const srv = await startServer(t);
  const res = await fetch(`${srv.url}/v1/sessions/s1/queue`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(res.status, 405);
  t.equal(res.headers.get('allow'), 'GET, HEAD');
  t.same(await res.json(), { error: { code: 'METHOD_NOT_ALLOWED', message: '/v1/sessions/s1/queue accepts GET, HEAD.', details: [] } });
  const post = await srv.get('/v1/sessions/s1/tool-results');
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'POST');
  const none = await srv.get('/v1/nothing-here');
  t.equal(none.status, 404);
  t.equal(none.json.error.code, 'NOT_FOUND');
});

t.test('GET tool-results/{call_id}: the complete result byte for byte; 404 RESULT_NOT_FOUND while running and for an unknown call', async (t) => {
  const srv = await startServer(t);
  const big = '{"content":"' + 'x'.repeat(20_000) + '","n":123456789012345678901234567890,"k":{"2":1,"1":2},"f":1.50}';
  t.equal((await srv.post('/v1/sessions/full/tool-calls', { call_id: 'c1', name: 'grep' })).status, 202);
  const running = await srv.get('/v1/sessions/full/tool-results/c1');
  t.equal(running.status, 404);
  t.equal(running.json.error.code, 'RESULT_NOT_FOUND', 'a running call has no result yet');
  t.equal((await srv.post('/v1/sessions/full/tool-results', `{"call_id":"c1","name":"grep","result":${big}}`)).status, 202);
  const full = await srv.get('/v1/sessions/full/tool-results/c1');
  t.equal(full.status, 200);
  t.equal(full.text, big, 'the result as posted, every byte');
  t.match(full.headers.get('content-type'), /^application\/json/);
  t.equal(full.headers.get('x-horologium-queue-seq'), '1');
  t.equal((await srv.get('/v1/sessions/full/tool-results/c%2F1')).json.error.code, 'RESULT_NOT_FOUND', 'an unknown call_id');
  t.equal((await srv.get('/v1/sessions/other/tool-results/c1')).status, 404, 'per session');
  t.equal((await srv.get('/v1/sessions/bad%20id/tool-results/c1')).json.error.code, 'INVALID_SESSION_ID');
  const queue = (await srv.get('/v1/sessions/full/queue?after=0')).json;
  t.equal(queue.committed, 0, 'reading it moves no cursor');
});
