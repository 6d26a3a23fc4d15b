/** The shared behaviour suite on the Redis backend, against a redis-server of this test's own. */
import t, { type Test } from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import { SHARDS, shardOf } from '../../src/store/redis-index.js';
import type { Store } from '../../src/store/types.js';
import { redisAvailable, requireRedis, startRedis } from '../helpers/redis.js';
import { result, storeBehaviour } from './behaviour.js';

/** A store on `url` (history 100), closed at the end of the test. */
async function openStore(t: Test, url: string): Promise<RedisStore> {
  const store = new RedisStore(url, { historySize: 100 });
  await store.open();
  t.teardown(() => store.close());
  return store;
}

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
    const store = await openStore(t, redis.url);
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

if (redisAvailable()) {
  const listAll = async (store: Store, limit: number) => {
    const sessions: string[] = [];
    for (let cursor: string | undefined, page; ; cursor = page.next ?? undefined) {
      page = await store.listSessions({ limit, covers: () => true, ...(cursor === undefined ? {} : { cursor }) });
      sessions.push(...page.sessions.map((s) => s.session));
      if (!page.next) return sessions;
    }
  };
  const sweepAll = async (store: Store) => {
    let cursor: string | undefined;
    do cursor = (await store.sweep({ sessions: 100, entries: 1000, ...(cursor === undefined ? {} : { cursor }) })).cursor;
    while (cursor !== undefined);
  };

  t.test('the sharded sessions index: one order across the shards, repaired after a lost update by the next write and by the sweep', async (t) => {
    const redis = await startRedis(t);
    const store = await openStore(t, redis.url);
    // 300 sessions over every shard, written in 30 batches of 10 at once (equal activity times
    // happen, and are ordered by id).
    const ids = Array.from({ length: 300 }, (_, k) => `s-${String(k).padStart(3, '0')}`);
    for (let k = 0; k < ids.length; k += 10) await Promise.all(ids.slice(k, k + 10).map((s) => store.appendEvent(s, 'note', '{}')));
    t.equal(new Set(ids.map(shardOf)).size, SHARDS, 'every shard holds some');
    const summaries = await Promise.all(ids.map(async (s) => (await store.sessionSummary(s))!));
    const expected = summaries.sort((a, b) => b.lastEventAt - a.lastEventAt || (a.session < b.session ? 1 : -1)).map((s) => s.session);
    t.same(await listAll(store, 7), expected, 'pages of 7 give every session once, newest first, ties by id descending');
    t.same(await listAll(store, 1000), expected, 'one page gives the same');

    // A crash between a write and its index update: the session is missing from its shard.
    const lost = 's-123';
    await redis.command('ZREM', `horologium:{idx:${shardOf(lost)}}:sessions`, lost);
    t.notOk((await listAll(store, 1000)).includes(lost), 'missing while the index lacks it');
    await store.appendEvent(lost, 'note', '{}');
    t.equal((await listAll(store, 1000))[0], lost, 'its next write puts it back, first');
    await redis.command('ZREM', `horologium:{idx:${shardOf(lost)}}:sessions`, lost);
    await sweepAll(store);
    t.equal((await listAll(store, 1000))[0], lost, 'and so does the sweep, with its activity');

    // The depth shards: lost, then repaired by the sweep.
    for (let k = 1; k <= 3; k++) await store.completeCall('deep', result(`c${k}`, '1'));
    await store.ack('deep', 1);
    t.equal(await store.queueDepth(), 2, 'two unacknowledged');
    await redis.command('ZREM', `horologium:{idx:${shardOf('deep')}}:depth`, 'deep');
    t.equal(await store.queueDepth(), 0, 'an update lost');
    await sweepAll(store);
    t.equal(await store.queueDepth(), 2, 'the sweep counts it again');
    await store.ack('deep', 3);
    t.equal(await store.queueDepth(), 0);

    // An entry whose session is gone (its deletion's index update lost): skipped, then removed by the TTL sweep.
    await redis.command('DEL', 'horologium:{s-000}:heads', 'horologium:{s-000}:events');
    t.notOk((await listAll(store, 1000)).includes('s-000'), 'not listed: it has no session');
    await store.sweep({ sessions: 100, entries: 1000, inactiveBefore: Date.now() + 1000 });
    t.match(await redis.command('ZSCORE', `horologium:{idx:${shardOf('s-000')}}:sessions`, 's-000'), /^\$-1/, 'and its entry is gone');
  });

  t.test('an index of the version before the shards is adopted at start-up', async (t) => {
    const redis = await startRedis(t);
    const store = new RedisStore(redis.url, { historySize: 100 });
    await store.open();
    await store.completeCall('old-1', result('c1', '1'));
    await store.completeCall('old-1', result('c2', '2'));
    await store.appendEvent('old-2', 'note', '{}');
    await store.close();
    // As the version before wrote it: one ZSET and one counter, no shards.
    const [s1, s2] = ['old-1', 'old-2'].map((s) => `horologium:{idx:${shardOf(s)}}:sessions`) as [string, string];
    await redis.command('ZADD', 'horologium:sessions', '1000', 'old-1', '2000', 'old-2');
    await redis.command('SET', 'horologium:depth', '2');
    await redis.command('DEL', s1, s2, `horologium:{idx:${shardOf('old-1')}}:depth`);
    const again = await openStore(t, redis.url);
    t.same(await listAll(again, 10), ['old-2', 'old-1'], 'listed from the shards, in the old order');
    t.equal(await again.queueDepth(), 2, 'with the unacknowledged entries counted');
    t.match(await redis.command('EXISTS', 'horologium:sessions', 'horologium:depth'), /^:0/, 'the old keys are gone');
  });
}

if (redisAvailable()) {
  t.test('a queue entry is kept as its header, a newline and the result as sent; one written whole as JSON (before) is still read', async (t) => {
    const redis = await startRedis(t);
    const store = await openStore(t, redis.url);
    const resultJson = '{"s":"é😀\\n\\"q\\"","n":123456789012345678901234567890}';
    await store.completeCall('fmt', result('new', resultJson));
    const raw = await redis.command('HGET', 'horologium:{fmt}:queue', '1');
    t.ok(raw.includes(`"callId":"new"`) && raw.endsWith(`}\n${resultJson}\r\n`), 'the header, then the result unescaped');
    const [fresh] = (await store.readQueue('fmt', 0, 10)).entries;
    t.ok(fresh?.result.equals(Buffer.from(resultJson)), 'read back byte for byte');
    t.match(fresh, { queueSeq: 1, callId: 'new', name: 'tool', isError: false });

    await store.completeCall('fmt', result('old', '0'));
    const old = { callId: 'old', name: 'tool', argsJson: '{"a":1}', resultJson, executionTimeJson: '0.5', isError: true, receivedAt: '2026-12-01T00:00:00.000Z' };
    t.match(await redis.command('HSET', 'horologium:{fmt}:queue', '2', JSON.stringify(old)), /^:0/, 'entry 2 overwritten as an older version wrote it');
    const [, before] = (await store.readQueue('fmt', 0, 10)).entries;
    t.ok(before?.result.equals(Buffer.from(resultJson)), 'the older form: its result byte for byte');
    t.match(before, { queueSeq: 2, callId: 'old', argsJson: '{"a":1}', executionTimeJson: '0.5', isError: true, receivedAt: '2026-12-01T00:00:00.000Z' });
    t.ok((await store.toolResult('fmt', 'old'))?.result.equals(Buffer.from(resultJson)), 'and by its call_id');
  });
}
