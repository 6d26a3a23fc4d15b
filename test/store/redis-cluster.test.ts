/**
 * The shared behaviour suite on a real Redis Cluster of this test's own (three masters, three
 * replicas, test/helpers/redis-cluster.ts): the same code as on one Redis, every script in one
 * slot, the sessions index merged from shards spread over the masters.
 */
import t from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { requireRedis } from '../helpers/redis.js';
import { storeBehaviour } from './behaviour.js';

if (requireRedis(t)) {
  const cluster = await startRedisCluster(t);
  storeBehaviour(t, async (t, options) => {
    // A clean slate on every master (a replica refuses FLUSHALL and follows its master).
    for (const { port } of cluster.nodes) {
      if ((await cluster.command(port, 'ROLE')).includes('master')) await cluster.command(port, 'FLUSHALL');
    }
    const open = async (): Promise<Store> => {
      const store = new RedisStore(cluster.url, options);
      await store.open();
      t.teardown(() => store.close());
      return store;
    };
    return { store: await open(), reopen: open };
  });
}
