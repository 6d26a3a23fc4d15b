import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SqliteWriter } from '../../src/store/sqlite-writer.js';
import { InlineCommits } from '../../src/store/sqlite-inline.js';
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

t.test('every commit on the writer thread (inline commits off)', async (t) => {
  storeBehaviour(t, async (t, options) => {
    const path = join(tempDir(t), 'nested', 'store.db');
    const open = async (): Promise<Store> => {
      const store = new SqliteStore(path, { ...options, inlineCommits: false });
      await store.open();
      t.teardown(() => store.close());
      return store;
    };
    return { store: await open(), reopen: open };
  });
});

t.test('batches are committed here while the thread is idle and by the thread under load, in one order', async (t) => {
  const path = join(tempDir(t), 'both.db');
  const committed: number[] = [];
  const store = new SqliteStore(path, { historySize: 10_000, telemetry: { committed: (writes) => committed.push(writes), trouble: () => {}, received: () => {} } });
  await store.open();
  t.teardown(() => store.close());
  const writer = store as unknown as { worker: Worker; inline: { apply: (ops: unknown[]) => unknown; paused: () => boolean } };
  // A commit slower than 50 ms (a loaded CI machine) would send batches to the thread for 2 s;
  // that rule has its own test below.
  writer.inline.paused = () => false;
  let here = 0;
  const apply = writer.inline.apply.bind(writer.inline);
  writer.inline.apply = (ops) => {
    here++;
    return apply(ops);
  };
  let thread = 0;
  const post = writer.worker.postMessage.bind(writer.worker);
  writer.worker.postMessage = (message: unknown) => {
    if (typeof message === 'object' && (message as { ops: unknown[] }).ops.length > 0) thread++;
    post(message);
  };
  // One at a time: each finds the thread idle.
  for (let k = 0; k < 20; k++) await store.completeCall('s', result(`one-${k}`, String(k)));
  t.equal(here, 20, 'one write at a time: every commit on this thread');
  t.equal(thread, 0);
  // A big result goes to the thread even when it is idle (it would hold the event loop); the
  // small writes that come while it is out wait for it, then are committed here, in order.
  const writes: Array<Promise<unknown>> = [store.completeCall('s', result('big', `"${'x'.repeat(300_000)}"`))];
  for (let k = 0; k < 50; k++) {
    writes.push(store.completeCall('s', result(`during-${k}`, String(k))));
    if (k % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
  }
  const outcomes = (await Promise.all(writes)) as Array<{ queueSeq: number }>;
  t.equal(thread, 1, 'the big result: committed by the thread');
  t.ok(here > 20, `the writes during it: committed here once it was done (${here - 20} batches)`);
  t.same(outcomes.map((o) => o.queueSeq), Array.from({ length: 51 }, (_, k) => 21 + k), 'queue_seqs in submission order, no gap');
  const hereBefore = here;
  for (let k = 0; k < 5; k++) await store.completeCall('s', result(`after-${k}`, String(k)));
  t.equal(here, hereBefore + 5, 'the thread idle again: commits here again');
  const page = await store.readQueue('s', 0, 1000);
  t.same(page.entries.map((e) => e.queueSeq), Array.from({ length: 76 }, (_, k) => k + 1), 'every entry, in order');
  const events = await store.readEvents('s', 0, 1000);
  t.same(events.events.map((e) => e.seq), Array.from({ length: 76 }, (_, k) => k + 1), 'every event, in order');
  t.equal(committed.reduce((a, n) => a + n, 0), 76, 'every write was committed once');
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

t.test('a commit over 50 ms on the main thread sends every batch to the thread for 2 s', async (t) => {
  const inline = new InlineCommits(join(tempDir(t), 'slow.db'), 10);
  t.teardown(() => inline.close());
  const small = [{ kind: 'event', session: 's', type: 'note', dataJson: '{}' }] as const;
  t.equal(inline.takes(small), true);
  inline.apply(small);
  t.equal(inline.takes(small), true, 'a fast commit changes nothing');
  const writer = (inline as unknown as { writer: { apply: (ops: unknown) => unknown } }).writer;
  const apply = writer.apply.bind(writer);
  writer.apply = (ops) => {
    const until = performance.now() + 70;
    while (performance.now() < until); // a disk that takes 70 ms to commit
    return apply(ops);
  };
  inline.apply(small);
  t.equal(inline.takes(small), false, 'after a 70 ms commit: the thread\'s');
  await new Promise((resolve) => setTimeout(resolve, 2100));
  t.equal(inline.takes(small), true, '2 s later: here again');
  t.equal(inline.takes([{ kind: 'delete', session: 's' }]), false, 'a deletion: always the thread\'s');
  t.equal(inline.takes([{ kind: 'event', session: 's', type: 'note', dataJson: `"${'x'.repeat(300_000)}"` }]), false, 'a large batch: the thread\'s');
});

t.test('what the main thread commits reaches the file (its checkpoints)', async (t) => {
  const path = join(tempDir(t), 'wal.db');
  const store = new SqliteStore(path, { historySize: 10 });
  await store.open();
  t.teardown(() => store.close());
  const fileSize = () => statSync(path).size;
  const before = fileSize();
  // About 9 M characters in 45 batches of 50 small results.
  const text = `"${'y'.repeat(2000)}"`;
  for (let b = 0; b < 45; b++) await Promise.all(Array.from({ length: 50 }, (_, k) => store.completeCall(`w${k % 5}`, result(`c${b}-${k}`, text))));
  for (let k = 0; k < 100 && fileSize() <= before + 1_000_000; k++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(fileSize() > before + 1_000_000, `the WAL was copied into the file (${before} -> ${fileSize()} bytes)`);
  t.equal((await store.readQueue('w0', 0, 1000)).entries.length, 450, 'every entry readable');
});

t.test('a file that cannot be opened fails open() with the path and the reason', async (t) => {
  const file = join(tempDir(t), 'plain-file');
  writeFileSync(file, 'not a directory');
  const store = new SqliteStore(join(file, 'h.db'), { historySize: 10 });
  await t.rejects(store.open(), { message: new RegExp(`^sqlite store ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/h\\.db: E`) });
  t.equal(await store.isReady(), false);
});
