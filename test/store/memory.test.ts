import t from 'tap';
import { MemoryStore } from '../../src/store/memory.js';
import { storeBehaviour } from './behaviour.js';

storeBehaviour(t, async (t, options) => {
  const store = new MemoryStore(options);
  await store.open();
  t.teardown(() => store.close());
  return { store };
});

t.test('a new memory store is a new epoch', async (t) => {
  const a = new MemoryStore({ historySize: 10 });
  const b = new MemoryStore({ historySize: 10 });
  t.not((await a.readEvents('s', 0, 1)).epoch, (await b.readEvents('s', 0, 1)).epoch);
});
