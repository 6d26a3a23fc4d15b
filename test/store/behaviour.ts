/**
 * The Store contract's behaviour suite: every backend runs exactly these tests
 * (test/store-*.test.ts), so that they cannot drift apart.
 */
import type { Test } from 'tap';
import type { CompleteCallInput, Store } from '../../src/store/types.js';
import { Retention } from '../../src/store/retention.js';
import { until } from '../helpers/wait.js';

export type StoreFactory = (t: Test, options: { historySize: number }) => Promise<{ store: Store; reopen?: () => Promise<Store> }>;

export function result(callId: string, resultJson: string, fingerprint = resultJson): CompleteCallInput {
  return {
    callId,
    name: 'tool',
    argsJson: null,
    resultJson,
    executionTimeJson: null,
    isError: false,
    fingerprint,
    completed: { name: 'tool', callId, isError: false, previewJson: resultJson, argumentsJson: null, resultBytes: Buffer.byteLength(resultJson), truncated: false },
  };
}

export function storeBehaviour(t: Test, make: StoreFactory): void {
  t.test('seqs start at 1 and have no gaps across kinds of writes', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const a = await store.appendEvent('s', 'note', '{"n":1}');
    const started = await store.startCall('s', { callId: 'c1', name: 'grep', argsJson: '{"q":1}', fingerprint: 'f', args: { echo: '"{\\"q\\":1}"', arguments: '{"q":1}' } });
    const done = await store.completeCall('s', result('c1', '{"big":12345678901234567890123}'));
    const other = await store.appendEvent('other', 'note', '{}');
    t.equal(a.seq, 1);
    t.match(started, { status: 'created', eventSeq: 2 });
    t.match(done, { status: 'created', queueSeq: 1, eventSeq: 3 });
    t.equal(other.seq, 1, 'sessions are independent');
    const page = await store.readEvents('s', 0, 100);
    t.same(page.events.map((e) => e.seq), [1, 2, 3]);
    t.equal(page.head, 3);
    t.equal(page.oldest, 1);
    t.match(JSON.parse(page.events[2]!.frame), { method: 'status', result: { type: 'tool_completed', session: 's', seq: 3, data: { call_id: 'c1', name: 'tool', result: { big: 12345678901234567890123 }, arguments: { q: 1 } } } });
  });

  t.test('concurrent writes get distinct, gapless seqs in acceptance order', async (t) => {
    const { store } = await make(t, { historySize: 1000 });
    const writes = Array.from({ length: 200 }, (_, k) =>
      k % 2 === 0 ? store.appendEvent('s', 'note', `{"k":${k}}`) : store.completeCall('s', result(`c${k}`, `{"k":${k}}`)),
    );
    const outcomes = await Promise.all(writes);
    const seqs = outcomes.map((o) => ('seq' in o ? o.seq : (o as { eventSeq: number }).eventSeq));
    t.same(seqs, Array.from({ length: 200 }, (_, k) => k + 1), 'event seqs follow submission order');
    const queueSeqs = outcomes.filter((o) => 'queueSeq' in o).map((o) => (o as { queueSeq: number }).queueSeq);
    t.same(queueSeqs, Array.from({ length: 100 }, (_, k) => k + 1));
    const page = await store.readQueue('s', 0, 1000);
    t.same(page.entries.map((e) => e.result.toString()), Array.from({ length: 100 }, (_, k) => `{"k":${2 * k + 1}}`));
  });

  t.test('idempotency by call_id', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const first = await store.completeCall('s', result('c1', '{"a":1}'));
    const again = await store.completeCall('s', result('c1', '{"a":1}'));
    const clash = await store.completeCall('s', result('c1', '{"a":2}'));
    t.match(first, { status: 'created', queueSeq: 1, eventSeq: 1 });
    t.same(again, { status: 'duplicate', queueSeq: 1, eventSeq: 1 });
    t.equal(clash.status, 'conflict');
    const [twin1, twin2] = await Promise.all([store.completeCall('s', result('c2', '{}')), store.completeCall('s', result('c2', '{}'))]);
    t.match(twin1, { status: 'created', queueSeq: 2 });
    t.match(twin2, { status: 'duplicate', queueSeq: 2 });
    t.equal((await store.readQueue('s', 0, 10)).head, 2, 'stored once');
    t.equal((await store.readEvents('s', 0, 10)).head, 2, 'published once');
    const startAgain = { callId: 'c3', name: 'x', argsJson: null, fingerprint: 'f', args: { echo: '""', arguments: 'null' } };
    t.match(await store.startCall('s', startAgain), { status: 'created', eventSeq: 3 });
    t.same(await store.startCall('s', startAgain), { status: 'duplicate', eventSeq: 3 });
    t.equal((await store.startCall('s', { ...startAgain, fingerprint: 'g' })).status, 'conflict');
    t.equal((await store.startCall('s', { ...startAgain, callId: 'c1' })).status, 'conflict', 'a completed call cannot start');
  });

  t.test('idempotency by event_id: stored once, a clash refused, free again after deletion', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const key = { id: 'e-1', fingerprint: 'note {"n":1}' };
    const first = await store.appendKeyedEvent('s', 'note', '{"n":1}', key);
    t.match(first, { status: 'created', event: { seq: 1, type: 'note' } });
    await store.appendEvent('s', 'note', '{"n":2}');
    t.same(await store.appendKeyedEvent('s', 'note', '{"n":1}', key), { status: 'duplicate', eventSeq: 1 }, 'a repeat reports the first seq');
    t.equal((await store.appendKeyedEvent('s', 'note', '{"n":9}', { id: 'e-1', fingerprint: 'note {"n":9}' })).status, 'conflict');
    t.match(await store.appendKeyedEvent('other', 'note', '{"n":1}', key), { status: 'created', event: { seq: 1 } }, 'keys are per session');
    const [a, b] = await Promise.all([
      store.appendKeyedEvent('s', 'note', '{}', { id: 'e-2', fingerprint: 'f2' }),
      store.appendKeyedEvent('s', 'note', '{}', { id: 'e-2', fingerprint: 'f2' }),
    ]);
    t.match(a, { status: 'created', event: { seq: 3 } });
    t.same(b, { status: 'duplicate', eventSeq: 3 }, 'a concurrent twin is stored once');
    t.match(await store.startCall('s', { callId: 'e-1', name: 'x', argsJson: null, fingerprint: 'f', args: { echo: '""', arguments: 'null' } }), { status: 'created', eventSeq: 4 }, 'an event_id and a call_id never meet');
    const page = await store.readEvents('s', 0, 10);
    t.same(page.events.map((e) => e.seq), [1, 2, 3, 4], 'nothing stored twice');
    t.equal((await store.readQueue('s', 0, 10)).head, 0, 'event keys are not queue entries');
    const open = await store.deleteSession('s');
    t.equal(open?.length, 1, 'the deletion answers the one open call; keyed events are not calls');
    t.match(open?.[0], { session: 's', callId: 'e-1', name: 'x', eventSeq: 4 });
    t.match(await store.appendKeyedEvent('s', 'note', '{"n":7}', key), { status: 'created', event: { seq: 1 } }, 'the event_id is free again');
  });

  t.test('queue cursor: default read, ack is monotonic, never beyond head', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    for (let k = 1; k <= 5; k++) await store.completeCall('s', result(`c${k}`, `${k}`));
    t.same((await store.readQueue('s', undefined, 2)).entries.map((e) => e.queueSeq), [1, 2]);
    t.same(await store.ack('s', 3), { status: 'ok', committed: 3 });
    t.same(await store.ack('s', 1), { status: 'ok', committed: 3 }, 'a lower ack changes nothing');
    t.same(await store.ack('s', 6), { status: 'beyond_head', head: 5 });
    const page = await store.readQueue('s', undefined, 100);
    t.equal(page.committed, 3);
    t.same(page.entries.map((e) => e.queueSeq), [4, 5]);
    t.same((await store.readQueue('s', 0, 100)).entries.length, 5, 'acknowledged entries stay readable');
    t.equal(await store.queueDepth(), 2);
    t.same(await store.ack('unknown', 0), { status: 'ok', committed: 0 });
  });

  t.test('history keeps the last historySize events', async (t) => {
    const { store } = await make(t, { historySize: 3 });
    for (let k = 1; k <= 7; k++) await store.appendEvent('s', 'note', `{"k":${k}}`);
    const page = await store.readEvents('s', 0, 100);
    t.same(page.events.map((e) => e.seq), [5, 6, 7]);
    t.equal(page.oldest, 5);
    t.equal(page.head, 7);
    t.same((await store.readEvents('s', 5, 1)).events.map((e) => e.seq), [6]);
    const empty = await store.readEvents('nobody', 0, 100);
    t.same([empty.head, empty.oldest, empty.events.length], [0, 0, 0]);
    t.equal(typeof empty.epoch, 'string');
    // The epoch names a session's log (per store for sqlite and memory, per session for redis): it
    // stays what a reader saw, through later writes, until the log is lost.
    t.equal((await store.readEvents('s', 0, 1)).epoch, page.epoch, 'a session keeps its epoch');
    await store.appendEvent('nobody', 'note', '{}');
    t.equal((await store.readEvents('nobody', 0, 1)).epoch, empty.epoch, 'the first write keeps the epoch its readers saw');
  });

  t.test('listeners hear committed events in order, and queue growth', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const heard: number[] = [];
    const queues: Array<[string, number]> = [];
    const off = store.listen({ events: (es) => heard.push(...es.map((e) => e.seq)), queue: (s, h) => queues.push([s, h]) });
    // Following the session first (redis: its channel subscribed) is what makes its commits heard.
    await store.follow('s');
    t.teardown(() => store.unfollow('s'));
    await Promise.all([store.appendEvent('s', 'a', '{}'), store.completeCall('s', result('c', '1')), store.appendEvent('s', 'b', '{}')]);
    // After commit, but not necessarily before the write's promise settles (redis notifies over
    // its pub/sub connection).
    for (let k = 0; k < 100 && heard.length < 3; k++) await new Promise((r) => setTimeout(r, 20));
    t.same(heard, [1, 2, 3]);
    t.same(queues, [['s', 1]]);
    off();
    await store.appendEvent('s', 'c', '{}');
    await new Promise((r) => setTimeout(r, 100));
    t.same(heard, [1, 2, 3], 'removed listeners hear nothing');
  });

  t.test('results are stored byte for byte, whatever their size', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const big = `{"s":"${'é😀x'.repeat(700_000)}","n":12345678901234567890123}`;
    await store.completeCall('s', result('big', big));
    const [entry] = (await store.readQueue('s', 0, 1)).entries;
    t.ok(entry?.result.equals(Buffer.from(big)), 'the stored bytes are the text\'s UTF-8 bytes');
    t.equal(entry?.executionTimeJson, 'null', 'no start and no producer time: null');
  });

  t.test('v1.2: open_calls and errors are kept at write time, unchanged by duplicates, filtered by state, kept across a reopen, reset by deletion', async (t) => {
    const made = await make(t, { historySize: 100 });
    let store = made.store;
    const start = (session: string, callId: string) =>
      store.startCall(session, { callId, name: 'grep', argsJson: null, fingerprint: `f-${callId}`, args: { echo: 'null', arguments: 'null' } });
    const failed = (callId: string): CompleteCallInput => {
      const input = result(callId, '"boom"');
      return { ...input, isError: true, completed: { ...input.completed, isError: true } };
    };
    const counts = async (session: string) => {
      const s = await store.sessionSummary(session);
      return s ? [s.openCalls, s.errors] : undefined;
    };
    await start('run', 'c1');
    await start('run', 'c2');
    t.same(await counts('run'), [2, 0], 'two calls started');
    t.match(await start('run', 'c1'), { status: 'duplicate' }, 'a repeated tool-calls');
    t.same(await counts('run'), [2, 0], 'changes nothing');
    await store.completeCall('run', failed('c1'));
    t.same(await counts('run'), [1, 1], 'an error result: one open call less, one error more');
    t.match(await store.completeCall('run', failed('c1')), { status: 'duplicate' });
    t.same(await counts('run'), [1, 1], 'its duplicate changes neither');
    await store.completeCall('fail', failed('x1'));
    t.same(await counts('fail'), [0, 1], 'an error result never announced: no open call to close');
    await store.completeCall('idle', result('y1', '1'));
    await store.appendEvent('idle2', 'note', '{}');
    t.same(await counts('idle'), [0, 0]);
    const listed = async (state: 'running' | 'failed' | 'idle', limit = 10) => {
      const names: string[] = [];
      for (let cursor: string | undefined; ; ) {
        const page = await store.listSessions({ limit, state, covers: () => true, ...(cursor === undefined ? {} : { cursor }) });
        names.push(...page.sessions.map((s) => s.session));
        if (!page.next) return names.sort();
        cursor = page.next;
      }
    };
    t.same(await listed('running'), ['run'], 'state=running: open calls');
    t.same(await listed('failed'), ['fail', 'run'], 'state=failed: errors');
    t.same(await listed('idle'), ['idle', 'idle2'], 'state=idle: neither');
    t.same(await listed('idle', 1), ['idle', 'idle2'], 'pages of one, each after the last');
    if (made.reopen) {
      store = await made.reopen();
      t.same([await counts('run'), await counts('fail')], [[1, 1], [0, 1]], 'kept across a reopen');
    }
    await store.completeCall('run', result('c2', '2'));
    t.same(await counts('run'), [0, 1], 'the last open call completed');
    await store.deleteSession('run');
    await start('run', 'c9');
    t.same(await counts('run'), [1, 0], 'deletion reset the counts');
  });

  t.test('a reopened store keeps seqs, cursor, idempotency and epoch', async (t) => {
    const made = await make(t, { historySize: 100 });
    if (!made.reopen) {
      // This backend keeps nothing across a restart, and a new epoch says so.
      await made.store.appendEvent('s', 'note', '{}');
      const before = await made.store.readEvents('s', 0, 10);
      const after = await (await make(t, { historySize: 100 })).store.readEvents('s', 0, 10);
      t.not(after.epoch, before.epoch, 'a new store is a new epoch');
      t.same([after.head, after.oldest, after.events], [0, 0, []], 'with nothing of the old one');
      return;
    }
    const { store } = made;
    await store.completeCall('s', result('c1', '1'));
    await store.completeCall('s', result('c2', '2'));
    await store.ack('s', 1);
    const epoch = (await store.readEvents('s', 0, 1)).epoch;
    await store.close();
    const again = await made.reopen();
    t.same(await again.completeCall('s', result('c1', '1')), { status: 'duplicate', queueSeq: 1, eventSeq: 1 });
    t.match(await again.completeCall('s', result('c3', '3')), { status: 'created', queueSeq: 3, eventSeq: 3 });
    const page = await again.readQueue('s', undefined, 10);
    t.equal(page.committed, 1);
    t.same(page.entries.map((e) => e.queueSeq), [2, 3]);
    t.equal((await again.readEvents('s', 0, 1)).epoch, epoch);
  });

  t.test('sessions exist from their first write; reads and acks create none', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    await store.readEvents('ghost', 0, 10);
    await store.readQueue('ghost', 0, 10);
    t.same(await store.ack('ghost', 0), { status: 'ok', committed: 0 });
    t.equal(await store.sessionSummary('ghost'), undefined, 'read, read and acked: still none');
    t.same((await store.listSessions({ limit: 10, covers: () => true })).sessions, []);
    t.equal(await store.deleteSession('ghost'), undefined, 'nothing to delete');
  });

  t.test('the sessions list: most recent activity first, paged by cursor, by prefix and by coverage', async (t) => {
    const { store } = await make(t, { historySize: 3 });
    for (const s of ['team-a:1', 'team-b:1', 'team-a:2', 'team-a:3']) {
      await store.appendEvent(s, 'note', '{}');
      await new Promise((r) => setTimeout(r, 5));
    }
    for (let k = 0; k < 4; k++) await store.completeCall('team-a:1', result(`c${k}`, `${k}`));
    await store.ack('team-a:1', 1);
    const all = await store.listSessions({ limit: 10, covers: () => true });
    t.same(all.sessions.map((s) => s.session), ['team-a:1', 'team-a:3', 'team-a:2', 'team-b:1'], 'by last event, newest first');
    t.equal(all.next, null, 'one page');
    const first = all.sessions[0]!;
    t.match(first, { session: 'team-a:1', head: 5, oldest: 3, queueHead: 4, committed: 1 });
    t.ok(first.createdAt > 0 && first.lastEventAt >= first.createdAt, 'times in ms');
    t.same(await store.sessionSummary('team-a:1'), first, 'one summary is the same as in the list');
    const p1 = await store.listSessions({ limit: 2, covers: () => true });
    t.same(p1.sessions.map((s) => s.session), ['team-a:1', 'team-a:3']);
    t.type(p1.next, 'string');
    const p2 = await store.listSessions({ limit: 2, cursor: p1.next as string, covers: () => true });
    t.same(p2.sessions.map((s) => s.session), ['team-a:2', 'team-b:1']);
    t.equal(p2.next, null, 'the last page');
    const prefixed = await store.listSessions({ limit: 10, prefix: 'team-a:', covers: (s) => s !== 'team-a:3' });
    t.same(prefixed.sessions.map((s) => s.session), ['team-a:1', 'team-a:2'], 'the prefix, less what the token does not cover');
  });

  t.test('deleting a session: gone, a new epoch and seq 1 after, call_ids reusable', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const heard: string[] = [];
    store.listen({ deleted: (s) => heard.push(s) });
    await store.startCall('d', { callId: 'c1', name: 'grep', argsJson: null, fingerprint: 'f', args: { echo: '""', arguments: 'null' } });
    await store.completeCall('d', result('c1', '{"a":1}'));
    await store.appendEvent('keep', 'note', '{}');
    const before = await store.readEvents('d', 0, 10);
    t.same(await store.deleteSession('d'), [], 'deleted, with no call left open');
    await until(() => heard.length === 1, 'the deletion notice');
    t.same(heard, ['d'], 'listeners hear of it');
    t.equal(await store.sessionSummary('d'), undefined);
    const gone = await store.readEvents('d', 0, 10);
    t.same([gone.head, gone.oldest, gone.events], [0, 0, []], 'no events');
    t.not(gone.epoch, before.epoch, 'the next incarnation has another epoch');
    const q = await store.readQueue('d', 0, 10);
    t.same([q.head, q.committed, q.oldest, q.entries], [0, 0, 0, []], 'no queue');
    t.equal(await store.queueDepth(), 0, 'its unacknowledged entry no longer counts');
    t.match(await store.completeCall('d', result('c1', '{"a":2}')), { status: 'created', queueSeq: 1, eventSeq: 1 }, 'the call_id is free again');
    const again = await store.readEvents('d', 0, 10);
    t.equal(again.epoch, gone.epoch, 'the epoch announced before the first write is the one it kept');
    t.equal((await store.sessionSummary('keep'))?.head, 1, 'other sessions untouched');
    t.equal(await store.deleteSession('nope'), undefined);
  });

  t.test('retention: exactly the acknowledged entries older than the cutoff go; unacknowledged ones stay', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    for (let k = 1; k <= 5; k++) await store.completeCall('r', result(`c${k}`, `${k}`));
    await store.completeCall('other', result('o1', '1'));
    await store.ack('r', 3);
    t.same(await store.sweep({ ackedBefore: Date.now() - 60_000, sessions: 100, entries: 1000 }), { entriesRemoved: 0, deleted: [], openCalls: [] }, 'younger than the cutoff: kept');
    let removed = 0;
    let cursor: string | undefined;
    do {
      // One session and one entry a slice: the pass is the sum of its slices.
      const slice = await store.sweep({ ackedBefore: Date.now() + 1000, sessions: 1, entries: 1, ...(cursor === undefined ? {} : { cursor }) });
      removed += slice.entriesRemoved;
      t.ok(slice.entriesRemoved <= 1, 'a slice removes at most its bound');
      cursor = slice.cursor;
    } while (cursor !== undefined || removed < 3);
    t.equal(removed, 3);
    const page = await store.readQueue('r', 0, 10);
    t.same(page.entries.map((e) => e.queueSeq), [4, 5], 'the unacknowledged ones');
    t.same([page.oldest, page.head, page.committed], [4, 5, 3]);
    t.same((await store.readQueue('r', undefined, 10)).entries.map((e) => e.queueSeq), [4, 5], 'from the cursor too');
    t.same((await store.readQueue('other', 0, 10)).entries.map((e) => e.queueSeq), [1], 'another session, unacknowledged: kept');
    t.equal(await store.queueDepth(), 3, 'the depth counts what is unacknowledged');
    await store.ack('r', 5);
    await store.sweep({ ackedBefore: Date.now() + 1000, sessions: 100, entries: 1000 });
    const empty = await store.readQueue('r', 0, 10);
    t.same([empty.entries, empty.oldest, empty.head], [[], 0, 5], 'all acknowledged and old: none left, the head stays');
    t.match(await store.completeCall('r', result('c6', '6')), { status: 'created', queueSeq: 6 }, 'the queue goes on from its head');
    t.same((await store.readQueue('r', 0, 10)).entries.map((e) => e.queueSeq), [6]);
  });

  t.test('a completed call\'s result by its call_id, byte for byte, while retention keeps its entry', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const big = '{"n":123456789012345678901234567890,"z":1,"a":[1.0,-0,1e400],"s":"é😀\\u0000"}';
    await store.completeCall('tr', result('first', '1'));
    await store.completeCall('tr', result('big', big));
    await store.startCall('tr', { callId: 'running', name: 'grep', argsJson: null, fingerprint: 'f', args: { echo: '""', arguments: 'null' } });
    await store.appendKeyedEvent('tr', 'note', '{}', { id: 'e-1', fingerprint: 'f' });
    const entry = await store.toolResult('tr', 'big');
    t.ok(entry?.result.equals(Buffer.from(big)), 'the stored result, byte for byte');
    t.match(entry, { queueSeq: 2, callId: 'big', name: 'tool' });
    t.equal(await store.toolResult('tr', 'running'), undefined, 'a call with no result yet');
    t.equal(await store.toolResult('tr', 'nope'), undefined, 'an unknown call_id');
    t.equal(await store.toolResult('tr', 'e-1'), undefined, 'an event_id is not a call');
    t.equal(await store.toolResult('other', 'big'), undefined, 'per session');
    await store.ack('tr', 2);
    await store.sweep({ ackedBefore: Date.now() + 1000, sessions: 100, entries: 1000 });
    t.equal(await store.toolResult('tr', 'big'), undefined, 'removed by retention: gone');
  });

  t.test('the calls a deleted session still had open come back from the deletion and from the TTL sweep, with their trace context', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const traceContext = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'v=1' };
    const start = (session: string, callId: string, extra = {}) =>
      store.startCall(session, { callId, name: 'grep', argsJson: null, fingerprint: 'f', args: { echo: '""', arguments: 'null' }, ...extra });
    await start('ttl', 'done');
    await store.completeCall('ttl', result('done', '1'));
    const before = Date.now() / 1000;
    await start('ttl', 'running', { traceContext });
    await store.completeCall('ttl', result('alone', '2'));
    const slice = await store.sweep({ sessions: 100, entries: 1000, inactiveBefore: Date.now() + 1000 });
    t.same(slice.deleted, ['ttl']);
    t.equal(slice.openCalls.length, 1, 'completed calls and results without a start are not open');
    const [open] = slice.openCalls;
    t.match(open, { session: 'ttl', callId: 'running', name: 'grep', eventSeq: 3, traceContext });
    t.ok(open!.startedAt >= before - 0.001 && open!.startedAt <= Date.now() / 1000 + 0.001, 'its tool_starting time, in seconds');
    await start('del', 'a');
    await start('del', 'b', { traceContext });
    const deleted = await store.deleteSession('del');
    t.same(deleted?.map((c) => [c.callId, c.traceContext]).sort(), [['a', undefined], ['b', traceContext]], 'DELETE answers both open calls, each with what it kept');
  });

  t.test('retention: a session TTL deletes 500 of 1,000 sessions, exactly the inactive ones, in slices', async (t) => {
    const { store } = await make(t, { historySize: 100 });
    const heard: string[] = [];
    store.listen({ deleted: (s) => heard.push(s) });
    const old = Array.from({ length: 500 }, (_, k) => `old-${k}`);
    const fresh = Array.from({ length: 500 }, (_, k) => `new-${k}`);
    await Promise.all(old.map((s) => store.completeCall(s, result('c', '1'))));
    const boundary = Date.now() + 20;
    await new Promise((r) => setTimeout(r, 40));
    await Promise.all(fresh.map((s) => store.appendEvent(s, 'note', '{}')));
    const retention = new Retention(store, { retainAckedMs: 0, sessionTtlMs: Date.now() - boundary });
    const pass = await retention.pass();
    t.equal(pass.sessionsRemoved, 500, 'the inactive ones, unacknowledged entries and all');
    t.ok(pass.slices >= 5, `in slices of at most 100 (${pass.slices})`);
    const left: string[] = [];
    for (let cursor: string | undefined, page; ; cursor = page.next) {
      page = await store.listSessions({ limit: 500, covers: () => true, ...(cursor ? { cursor } : {}) });
      left.push(...page.sessions.map((s) => s.session));
      if (!page.next) break;
    }
    t.same(left.sort(), [...fresh].sort(), 'exactly the active ones remain');
    await until(() => heard.length === 500, 'every deletion announced');
    t.same(heard.sort(), [...old].sort());
    t.equal(await store.queueDepth(), 0);
  });
}
