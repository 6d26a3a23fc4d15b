import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteWriter, type WriteResult } from '../src/store/sqlite-writer.js';
import type { Store } from '../src/store/types.js';
import { tempDir } from './helpers/server.js';
import { result, storeBehaviour } from './store.behaviour.js';

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
  // Straight on the writer (what the writer thread runs), so that a write can be made to throw.
  const path = join(tempDir(t), 'b.db');
  const writer = new SqliteWriter(path, 10);
  t.teardown(() => writer.close());
  const complete = (callId: string) => () => writer.apply([{ kind: 'complete', session: 's', input: result(callId, '1') }])[0]!;
  const value = (r: WriteResult) => (r.ok ? r.value : undefined);
  const results = writer.commitBatch([
    () => value(complete('a')())!,
    () => {
      value(complete('bad')());
      throw new Error('boom');
    },
    () => value(complete('b')())!,
  ]);
  t.same(results.map((r) => r.ok), [true, false, true]);
  t.same(results[1], { ok: false, error: { name: 'Error', message: 'boom' } });
  const store = new SqliteStore(path, { historySize: 10 });
  await store.open();
  t.teardown(() => store.close());
  const page = await store.readQueue('s', 0, 10);
  t.same(page.entries.map((e) => [e.queueSeq, e.callId]), [[1, 'a'], [2, 'b']], 'no gap, nothing of the failed write');
  t.equal((await store.readEvents('s', 0, 10)).head, 2, 'the heads of the failed write rolled back too');
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
