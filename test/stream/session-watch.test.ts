/** watch_sessions on the stream (docs/protocol.md section 9): create, event and delete, throttled, filtered. */
import t from 'tap';
import { startServer } from '../helpers/server.js';
import { sleep, until } from '../helpers/wait.js';
import { connect } from '../helpers/ws-client.js';

const note = (k: number) => ({ type: 'note', data: { k } });
const sessionFrames = (frames: any[], session: string) => frames.filter((f) => f.method === 'session' && f.result.session === session).map((f) => f.result);

t.test('created, then events at most once a second (the state at the end of the second), then deleted', async (t) => {
  const srv = await startServer(t);
  const c = await connect(srv);
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'watch_sessions', params: { prefix: 'team-a:' } }));
  await sleep(100);
  await srv.post('/v1/sessions/team-a:1/events', note(1));
  await until(() => sessionFrames(c.frames, 'team-a:1').length === 1, 'the creation');
  const created = sessionFrames(c.frames, 'team-a:1')[0];
  t.same(Object.keys(created), ['session', 'epoch', 'head', 'oldest', 'queue_head', 'committed', 'created_at', 'last_event_at', 'open_calls', 'errors'], 'a summary (v1.2: with open_calls and errors)');
  t.equal(created.head, 1);
  for (let k = 2; k <= 4; k++) await srv.post('/v1/sessions/team-a:1/events', note(k));
  await srv.post('/v1/sessions/team-b:1/events', note(1));
  await sleep(400);
  t.equal(sessionFrames(c.frames, 'team-a:1').length, 1, 'nothing more inside the second');
  await until(() => sessionFrames(c.frames, 'team-a:1').length === 2, 'the change at the end of the second', 3000);
  t.equal(sessionFrames(c.frames, 'team-a:1')[1].head, 4, 'with the state of that moment');
  await sleep(1100);
  await fetch(`${srv.url}/v1/sessions/team-a:1`, { method: 'DELETE' });
  await until(() => sessionFrames(c.frames, 'team-a:1').length === 3, 'the deletion');
  t.same(sessionFrames(c.frames, 'team-a:1')[2], { session: 'team-a:1', deleted: true });
  t.same(sessionFrames(c.frames, 'team-b:1'), [], 'outside the prefix: nothing');
  c.ws.send(JSON.stringify({ method: 'unwatch_sessions' }));
  await sleep(100);
  await srv.post('/v1/sessions/team-a:2/events', note(1));
  await sleep(300);
  t.same(sessionFrames(c.frames, 'team-a:2'), [], 'after unwatch_sessions: nothing');
});

t.test('only sessions the token covers; a malformed watch is an error frame', async (t) => {
  const tokens = [
    { token: 'watcher-team-a-0123456789', scopes: ['subscribe' as const], sessions: ['team-a:*'] },
    { token: 'watch-admin-0123456789abc', scopes: ['admin' as const], sessions: ['*'] },
  ];
  const srv = await startServer(t, { auth: { tokens, open: false }, rateLimit: 0 });
  const c = await connect(srv, '', { authorization: `Bearer ${tokens[0]!.token}` });
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'watch_sessions', params: { prefix: '' } }));
  t.match(await c.next((f) => f.method === 'error'), { result: { code: 'INVALID_MESSAGE' } });
  c.ws.send(JSON.stringify({ method: 'watch_sessions' }));
  await sleep(100);
  const admin = { authorization: `Bearer ${tokens[1]!.token}` };
  await srv.post('/v1/sessions/team-b:1/events', note(1), admin);
  await srv.post('/v1/sessions/team-a:1/events', note(1), admin);
  await until(() => sessionFrames(c.frames, 'team-a:1').length === 1, 'the covered session');
  await sleep(200);
  t.same(c.frames.filter((f) => f.method === 'session').map((f) => f.result.session), ['team-a:1'], 'never a session the token does not cover');
});
