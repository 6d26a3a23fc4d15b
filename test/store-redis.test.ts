/** The shared behaviour suite on the Redis backend, against a redis-server of this test's own. */
import t from 'tap';
import { RedisStore } from '../src/store/redis.js';
import type { Store } from '../src/store/types.js';
import { requireRedis, startRedis } from './helpers/redis.js';
import { storeBehaviour } from './store.behaviour.js';

if (requireRedis(t)) {
  const redis = await startRedis(t);
  storeBehaviour(t, async (t, options) => {
    await redis.command('FLUSHALL');
    const open = async (): Promise<Store> => {
      const store = new RedisStore(redis.url, options);
      await store.open();
      t.teardown(() => store.close());
      return store;
    };
    return { store: await open(), reopen: open };
  });
}
