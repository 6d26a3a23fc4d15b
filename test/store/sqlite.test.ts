import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SqliteWriter } from '../../src/store/sqlite-writer.js';
import type { Store } from '../../src/store/types.js';
import { tempDir } from '../helpers/server.js';
import { result, storeBehaviour } from './behaviour.js';

storeBehaviour(t, async (t, options) => {
  const path = join(tempDir(t), 'nested', 'store.db');
  const open = async (): Promise<Store> => {
    const store = new SqliteStore(path, options);
    await store.open();
    t.teardown(() => store.close());
    return store;
  };
  return { store: await open(), reopen: open };
});

t.test('one failing write in a batch rolls back alone', async (t) => {
  // The production path: one batch applied as the writer thread applies it (SqliteWriter.apply),
  // its middle write made to fail inside SQLite (a NOT NULL column given null).
  const path = join(tempDir(t), 'b.db');
  const writer = new SqliteWriter(path, 10);
  t.teardown(() => writer.close());
  const failing = { kind: 'event', session: 's', type: null as unknown as string, dataJson: '{}' } as const;
  const results = writer.apply([
    { kind: 'complete', session: 's', input: result('a', '1') },
    failing,
    { kind: 'event', session: 's', type: 'note', dataJson: '{"n":1}' },
    { kind: 'complete', session: 's', input: result('b', '2') },
  ]);
  t.same(
    results.map((r) => (r.ok ? [r.applied.kind, typeof r.applied.value === 'object' && 'seq' in r.applied.value ? r.applied.value.seq : (r.applied.value as { eventSeq: number }).eventSeq] : ['failed', r.error.name])),
    [['complete', 1], ['failed', 'SqliteError'], ['event', 2], ['complete', 3]],
    'the failed write took no seq; the others kept theirs',
  );
  t.match(results[1], { ok: false, error: { message: /NOT NULL constraint failed: events\.type/ } });
  writer.close();
  const store = new SqliteStore(path, { historySize: 10 });
  await store.open();
  t.teardown(() => store.close());
  const page = await store.readQueue('s', 0, 10);
  t.same(page.entries.map((e) => [e.queueSeq, e.callId]), [[1, 'a'], [2, 'b']], 'both results committed, in order');
  const events = await store.readEvents('s', 0, 10);
  t.same(events.events.map((e) => [e.seq, e.type]), [[1, 'tool_completed'], [2, 'note'], [3, 'tool_completed']], 'nothing of the failed write');
  t.equal(events.head, 3, 'the heads agree with the events');
});

t.test('a closed store rejects writes as unavailable', async (t) => {
  const store = new SqliteStore(join(tempDir(t), 'c.db'), { historySize: 10 });
  await store.open();
  await store.close();
  await t.rejects(store.appendEvent('s', 'a', '{}'), { name: 'StoreUnavailableError' });
});

t.test('a writer thread that stops is replaced: writes get 503 meanwhile, then resume in order', async (t) => {
  const store = new SqliteStore(join(tempDir(t), 'r.db'), { historySize: 10 });
  await store.open();
  t.teardown(() => store.close());
  t.equal((await store.appendEvent('s', 'a', '{}')).seq, 1);
  // The thread is private on purpose; a test may stop it the way a crash would.
  await (store as unknown as { worker: Worker }).worker.terminate();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(await store.isReady(), false, 'not ready while the writer is down');
  await t.rejects(store.appendEvent('s', 'a', '{}'), { name: 'StoreUnavailableError' });
  for (let k = 0; k < 100 && !(await store.isReady()); k++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(await store.isReady(), true, 'ready again once a new writer has opened the file');
  t.equal((await store.appendEvent('s', 'a', '{}')).seq, 2, 'the refused write stored nothing');
  t.same((await store.readEvents('s', 0, 10)).events.map((e) => e.seq), [1, 2]);
});

t.test('a file that cannot be opened fails open() with the path and the reason', async (t) => {
  const file = join(tempDir(t), 'plain-file');
  writeFileSync(file, 'not a directory');
  const store = new SqliteStore(join(file, 'h.db'), { historySize: 10 });
  await t.rejects(store.open(), { message: new RegExp(`^sqlite store ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/h\\.db: E`) });
  t.equal(await store.isReady(), false);
});
