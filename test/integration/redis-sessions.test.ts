/**
 * Sessions across two instances on one redis-server of this test's own (docs/protocol.md section 9):
 * the same list from both, a deletion on one seen by a subscriber and a watcher on the other, an
 * SSE reader on the other ended by it, and the TTL sweep of one instance heard by the other.
 */
import t from 'tap';
import { requireRedis, startRedis } from '../helpers/redis.js';
import { startServer } from '../helpers/server.js';
import { Retention } from '../../src/store/retention.js';
import { sleep } from '../helpers/wait.js';
import { connect } from '../helpers/ws-client.js';

const note = (k: number) => ({ type: 'note', data: { k } });

if (requireRedis(t)) {
  t.test('two instances: one list; a deletion on A reaches B subscribers, watchers and SSE readers', async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    for (const [k, s] of ['x:1', 'x:2', 'x:3', 'y:1'].entries()) {
      await (k % 2 ? b : a).post(`/v1/sessions/${s}/events`, note(k));
      await sleep(5);
    }
    const fromA = (await a.get('/v1/sessions?limit=2')).json;
    const fromB = (await b.get('/v1/sessions?limit=2')).json;
    t.same(fromA, fromB, 'the same page from both');
    t.same(fromA.sessions.map((s: any) => s.session), ['y:1', 'x:3']);
    t.same((await b.get(`/v1/sessions?limit=2&cursor=${fromA.next}`)).json.sessions.map((s: any) => s.session), ['x:2', 'x:1'], "one instance's cursor on the other");

    const sub = await connect(b, '?session=x:1&since=0');
    t.teardown(() => sub.ws.close());
    await sub.next((f) => f.method === 'status');
    const watcher = await connect(b);
    t.teardown(() => watcher.ws.close());
    watcher.ws.send(JSON.stringify({ method: 'watch_sessions', params: { prefix: 'x:' } }));
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const sse = await fetch(`${b.url}/v1/sessions/x:1/sse?since=0`, { signal: abort.signal });
    const sseText = (async () => {
      let text = '';
      const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += new TextDecoder().decode(value);
      }
    })();
    await sleep(200);
    const del = await fetch(`${a.url}/v1/sessions/x:1`, { method: 'DELETE' });
    t.equal(del.status, 200);
    t.same(await sub.next((f) => f.method === 'unsubscribed'), { method: 'unsubscribed', result: { session: 'x:1', reason: 'deleted' } }, 'the subscriber on B is told');
    t.same(await watcher.next((f) => f.method === 'session'), { method: 'session', result: { session: 'x:1', deleted: true } }, 'the watcher on B too');
    t.match(await sseText, /event: unsubscribed\ndata: \{"session":"x:1","reason":"deleted"\}\n\n$/, 'and the SSE reader on B, whose stream ends');
    t.equal((await b.get('/v1/sessions/x:1')).status, 404);
    t.same((await b.get('/v1/sessions')).json.sessions.map((s: any) => s.session), ['y:1', 'x:3', 'x:2']);
    const again = await b.post('/v1/sessions/x:1/events', note(9));
    t.same(again.json, { event_seq: 1 }, 'a later write starts at seq 1');
  });

  t.test("one instance's TTL sweep is heard on the other", async (t) => {
    const redis = await startRedis(t);
    const a = await startServer(t, { store: redis.url });
    const b = await startServer(t, { store: redis.url });
    await a.post('/v1/sessions/idle/events', note(1));
    const sub = await connect(b, '?session=idle');
    t.teardown(() => sub.ws.close());
    await sub.next((f) => f.method === 'subscribed');
    await sleep(50);
    await b.post('/v1/sessions/busy/events', note(1));
    const retention = a.app.horologium.retention;
    // A pass with a TTL that only the idle session has outlived, run on A.
    const pass = await new Retention(a.app.horologium.store, { retainAckedMs: 0, sessionTtlMs: 25 }).pass();
    t.equal(retention.enabled, true, 'the default 24h retention is on');
    t.equal(pass.sessionsRemoved, 1);
    t.same(await sub.next((f) => f.method === 'unsubscribed'), { method: 'unsubscribed', result: { session: 'idle', reason: 'deleted' } });
    t.same((await b.get('/v1/sessions')).json.sessions.map((s: any) => s.session), ['busy']);
  });
}
