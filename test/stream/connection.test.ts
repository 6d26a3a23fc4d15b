/**
 * Connection through a fake Transport: the replay-then-live order, the slow-consumer close and
 * what happens after a close, with no socket involved.
 */
import t, { type Test } from 'tap';
import type { CloseName } from '../../src/common/errors.js';
import { Connection } from '../../src/stream/connection.js';
import { Hub } from '../../src/stream/hub.js';
import type { Outgoing, Transport } from '../../src/stream/transport.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { until } from '../helpers/wait.js';
import { pino } from 'pino';
import { StreamTelemetry } from '../../src/stream/stream-telemetry.js';
import { Metrics, StreamTotals } from '../../src/telemetry/metrics.js';

class FakeTransport implements Transport {
  sent: Array<{ method: string; seq?: number; epoch?: string }> = [];
  closed: { name: CloseName; reason: string } | undefined;
  terminated = false;
  bufferedBytes = 0;
  private drainWaiters: Array<() => void> = [];

  get open(): boolean {
    return this.closed === undefined && !this.terminated;
  }
  send(message: Outgoing, epoch?: string): number {
    if (!this.open) return 0;
    this.sent.push({ method: message.method, ...(message.seq === undefined ? {} : { seq: message.seq }), ...(epoch === undefined ? {} : { epoch }) });
    return message.byteLength;
  }
  drained(): Promise<void> {
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
  /** The peer read everything. */
  drain(): void {
    this.bufferedBytes = 0;
    for (const w of this.drainWaiters.splice(0)) w();
  }
  heartbeat(): void {}
  close(name: CloseName, reason: string): void {
    this.closed ??= { name, reason };
  }
  terminate(): void {
    this.terminated = true;
  }
  onClosed(): void {}
}

/** Telemetry that logs nothing: these tests look at what the transport was given. */
const quietTelemetry = () => new StreamTelemetry('ws', new StreamTotals(), pino({ enabled: false }), '127.0.0.1', undefined);
const streamTotals = () => new Metrics().streams;

const statusSeqs = (tr: FakeTransport) => tr.sent.filter((m) => m.method === 'status').map((m) => m.seq);

async function setup(t: Test, maxBufferedBytes = 1 << 20) {
  const store = new MemoryStore({ historySize: 1000 });
  const hub = new Hub(store, 60_000, streamTotals());
  t.teardown(() => hub.closeAll());
  const transport = new FakeTransport();
  const connection = hub.open(transport, { kind: 'ws', log: pino({ enabled: false }), address: '127.0.0.1', principal: undefined, limits: { maxBufferedBytes, maxSubscriptions: 10 } });
  return { store, hub, transport, connection };
}


t.test('replay then live: events committed during a paced replay follow it, in order, once', async (t) => {
  const { store, transport, connection } = await setup(t, 4000);
  for (let k = 1; k <= 5; k++) await store.appendEvent('s', 'note', `{"k":${k}}`);
  // The peer reads nothing yet: above half the buffer, the replay waits for it.
  transport.bufferedBytes = 2100;
  const subscribing = connection.subscribe('s', 0, undefined);
  await until(() => transport.sent.length >= 1, 'the subscribed frame');
  for (let k = 6; k <= 8; k++) await store.appendEvent('s', 'note', `{"k":${k}}`);
  t.same(statusSeqs(transport), [], 'nothing replayed while the transport is full');
  transport.drain();
  await subscribing;
  t.equal(transport.sent[0]?.method, 'subscribed', 'subscribed comes first');
  t.same(statusSeqs(transport), [1, 2, 3, 4, 5, 6, 7, 8], 'the replay, then what was committed meanwhile');
  await store.appendEvent('s', 'note', '{"k":9}');
  t.same(statusSeqs(transport), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'then live');
  t.ok(transport.sent.filter((m) => m.method === 'status').every((m) => m.epoch !== undefined), 'every status frame names its epoch');
});

t.test('a live event over the buffer closes with SLOW_CONSUMER; nothing is sent after', async (t) => {
  const { store, transport, connection } = await setup(t, 1000);
  await connection.subscribe('s', undefined, undefined);
  await store.appendEvent('s', 'note', '{"k":1}');
  t.same(statusSeqs(transport), [1]);
  transport.bufferedBytes = 990;
  await store.appendEvent('s', 'note', '{"k":2}');
  t.same(transport.closed, { name: 'SLOW_CONSUMER', reason: 'slow consumer' });
  t.same(connection.sessions(), [], 'its subscriptions are gone');
  transport.drain();
  await store.appendEvent('s', 'note', '{"k":3}');
  t.same(statusSeqs(transport), [1], 'no event after the close');
});

t.test('a replay never closes by itself; events held back past the buffer do', async (t) => {
  const { store, transport, connection } = await setup(t, 2000);
  for (let k = 1; k <= 50; k++) await store.appendEvent('s', 'note', `{"k":${k}}`);
  transport.bufferedBytes = 1500;
  const subscribing = connection.subscribe('s', 0, undefined);
  await until(() => transport.sent.length === 1, 'the subscribed frame');
  t.equal(transport.closed, undefined, 'a full transport during replay only pauses it');
  for (let k = 51; k <= 60; k++) await store.appendEvent('s', 'note', `{"k":${k}}`);
  t.same(transport.closed, { name: 'SLOW_CONSUMER', reason: 'slow consumer' }, 'held-back live events over the limit close it');
  transport.drain();
  await subscribing;
  t.same(statusSeqs(transport), [], 'and the replay stops');
});

t.test('a subscription ended by the server is told why', async (t) => {
  const { transport, connection, hub } = await setup(t);
  await connection.subscribe('s', undefined, undefined);
  hub.endSession('s', 'deleted');
  t.same(transport.sent.map((m) => m.method), ['subscribed', 'unsubscribed']);
  t.same(connection.sessions(), []);
});

t.test('a subscribe that cannot read the store: an error frame naming the session, no subscription', async (t) => {
  const store = new MemoryStore({ historySize: 10 });
  store.readEvents = async () => {
    throw new StoreUnavailableError('down');
  };
  const hub = new Hub(store, 60_000, streamTotals());
  t.teardown(() => hub.closeAll());
  const transport = new FakeTransport();
  const frames: string[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message, epoch) => {
    frames.push(message.frame);
    return send(message, epoch);
  };
  const connection = new Connection(transport, store, hub, { maxBufferedBytes: 1 << 20, maxSubscriptions: 10 }, quietTelemetry());
  await connection.subscribe('s', 0, undefined);
  t.same(frames.map((f) => JSON.parse(f)), [
    { method: 'error', result: { code: 'STORE_UNAVAILABLE', message: 'the store is unreachable; subscribe again shortly', session: 's' } },
  ]);
  t.same(connection.sessions(), []);
});
