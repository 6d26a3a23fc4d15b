/** The shared behaviour suite on the Redis backend, against a redis-server of this test's own. */
import t from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';
import { redisAvailable, requireRedis, startRedis } from '../helpers/redis.js';
import { result, storeBehaviour } from './behaviour.js';

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

if (redisAvailable()) {
  t.test('a session written before the heads counted its queue and call fields is taken as it is, not as damaged', async (t) => {
    const redis = await startRedis(t);
    const store = new RedisStore(redis.url, { historySize: 100 });
    await store.open();
    t.teardown(() => store.close());
    await store.completeCall('old', result('c1', '1'));
    const before = await store.readEvents('old', 0, 10);
    t.match(await redis.command('HDEL', 'horologium:{old}:heads', 'queue_fields', 'call_fields'), /^:2/, 'the counts removed, as an older version wrote it');
    const after = await store.readEvents('old', 0, 10);
    t.same([after.epoch, after.head, after.events.length], [before.epoch, 1, 1], 'the same incarnation');
    t.match(await redis.command('HMGET', 'horologium:{old}:heads', 'queue_fields', 'call_fields'), /\$1\r\n2\r\n\$1\r\n3\r\n/, 'the counts taken from the hashes');
    t.match(await store.completeCall('old', result('c2', '2')), { status: 'created', queueSeq: 2, eventSeq: 2 });
    t.equal((await store.readEvents('old', 0, 10)).epoch, before.epoch, 'and stays so');
  });
}
