import { join } from 'node:path';
import t from 'tap';
import { SqliteStore } from '../src/store/sqlite.js';
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
  const store = new SqliteStore(join(tempDir(t), 'b.db'), { historySize: 10 });
  await store.open();
  t.teardown(() => store.close());
  const failing = { ...result('bad', '1'), composeData: () => { throw new Error('boom'); } };
  const outcomes = await Promise.allSettled([store.completeCall('s', result('a', '1')), store.completeCall('s', failing), store.completeCall('s', result('b', '2'))]);
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  const page = await store.readQueue('s', 0, 10);
  t.same(page.entries.map((e) => [e.queueSeq, e.callId]), [[1, 'a'], [2, 'b']], 'no gap, nothing of the failed write');
});

t.test('a closed store rejects writes as unavailable', async (t) => {
  const store = new SqliteStore(join(tempDir(t), 'c.db'), { historySize: 10 });
  await store.open();
  await store.close();
  await t.rejects(store.appendEvent('s', 'a', '{}'), { name: 'StoreUnavailableError' });
});
