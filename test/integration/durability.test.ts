/**
 * A 202 means committed: SIGKILL the server right after a burst of acknowledged results, restart it
 * on the same file, and find every one of them exactly once, with seqs, cursor and idempotency.
 */
import { join } from 'node:path';
import t from 'tap';
import { client, tempDir } from '../helpers/server.js';
import { spawnServer } from '../helpers/process.js';

t.test('every 202 survives kill -9, exactly once', async (t) => {
  const store = `sqlite:${join(tempDir(t), 'data', 'h.db')}`;
  const first = await spawnServer(t, { HOROLOGIUM_STORE: store, LOG_LEVEL: 'warn' });
  const api = client(first.url);
  const acknowledged = new Map<string, number>();
  let stop = false;
  // 8 concurrent producers post as fast as they can; the kill lands mid-burst.
  const producers = Array.from({ length: 8 }, async (_, p) => {
    for (let k = 0; !stop; k++) {
      const callId = `p${p}-${k}`;
      try {
        const r = await api.post('/v1/sessions/crash/tool-results', `{"call_id":"${callId}","name":"t","result":{"n":12345678901234567890123,"k":${k}}}`);
        if (r.status === 202) acknowledged.set(callId, r.json.queue_seq);
      } catch {
        return; // connection refused or reset: the server is gone
      }
    }
  });
  await new Promise((r) => setTimeout(r, 1500));
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(producers);
  await first.exited;
  t.ok(acknowledged.size > 50, `${acknowledged.size} results acknowledged before the kill`);

  const second = await spawnServer(t, { HOROLOGIUM_STORE: store, LOG_LEVEL: 'warn' });
  const again = client(second.url);
  const seen = new Map<string, number>();
  for (let after = 0; ; ) {
    const page = await again.get(`/v1/sessions/crash/queue?after=${after}&limit=1000`);
    if (page.json.entries.length === 0) break;
    for (const e of page.json.entries) {
      t.notOk(seen.has(e.call_id), `${e.call_id} once`);
      seen.set(e.call_id, e.queue_seq);
      after = e.queue_seq;
    }
  }
  let missing = 0;
  for (const [callId, queueSeq] of acknowledged) if (seen.get(callId) !== queueSeq) missing++;
  t.equal(missing, 0, 'every acknowledged result is there with its queue_seq');
  const seqs = [...seen.values()];
  t.same(seqs, Array.from({ length: seqs.length }, (_, k) => k + 1), 'queue_seq gapless after restart');
  const events = await again.get('/v1/sessions/crash/events?after=0&limit=1');
  t.equal(events.json.head, seqs.length, 'one event per stored result');

  const [someId, someSeq] = [...acknowledged][0]!;
  const retry = await again.post('/v1/sessions/crash/tool-results', `{"call_id":"${someId}","name":"t","result":{"n":12345678901234567890123,"k":${someId.split('-')[1]}}}`);
  t.same([retry.status, retry.json.queue_seq, retry.json.duplicate], [200, someSeq, true], 'idempotency survives');
  const next = await again.post('/v1/sessions/crash/tool-results', { call_id: 'after-restart', name: 't', result: 1 });
  t.equal(next.json.queue_seq, seqs.length + 1, 'seqs continue');
  second.child.kill('SIGTERM');
  t.equal((await second.exited).code, 0, 'SIGTERM exits cleanly');
});
