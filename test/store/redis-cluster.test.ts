/**
 * The shared behaviour suite on a real Redis Cluster of this test's own (three masters, three
 * replicas, test/helpers/redis-cluster.ts): the same code as on one Redis, every script in one
 * slot, the sessions index merged from shards spread over the masters.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { requireRedis } from '../helpers/redis.js';
import { storeBehaviour } from './behaviour.js';

if (requireRedis(t)) {
  const cluster = await startRedisCluster(t);

  t.test('a closed store leaves nothing running: its process exits, even with slot refreshes in flight at close', async (t) => {
    // The slots map is read every second; with every node frozen each read hangs, so one is in
    // flight when the store closes. (ioredis 5 scheduled the next read from the hung one's
    // callback after close and kept the process alive for ever.)
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/open-and-close-store.ts', cluster.url], {
      cwd: new URL('../../', import.meta.url),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.teardown(() => {
      cluster.thaw();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const exited = once(child, 'exit');
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const printed = async (line: string, ms: number) => {
      for (const end = Date.now() + ms; !out.includes(line); await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`the store process did not print "${line}" within ${ms} ms: ${out}`);
      }
    };
    await printed('open', 20_000);
    cluster.freeze();
    await new Promise((r) => setTimeout(r, 2500));
    child.stdin.end('close\n');
    await printed('closed', 10_000);
    cluster.thaw();
    const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 10_000))]);
    t.same(outcome, [0, null], 'the process exits by itself within 10 s of close, with code 0');
    await cluster.healthy();
  });

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
