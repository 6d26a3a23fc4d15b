/**
 * Tool executions as OpenTelemetry spans (docs/operations.md, "Traces"): real servers export to a
 * real OTLP/HTTP receiver (test/helpers/otlp-receiver.ts, decoded with OpenTelemetry's own code),
 * over protobuf and JSON; one span per completed call with its name, parent, attributes, status
 * and times; none when tracing is off; content only when asked; a call started on one instance and
 * completed on another, on Redis.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { once } from 'node:events';
import { createServer } from 'node:net';
import t from 'tap';
import { Producer } from '../../src/producer/index.js';
import type { Config } from '../../src/config/config.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { spawnServer } from '../helpers/process.js';
import { requireRedis, startRedis } from '../helpers/redis.js';
import { client, startServer, type Running } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const traceparent = (spanId = PARENT_ID) => `00-${TRACE_ID}-${spanId}-01`;
const protobuf = { tracing: { protocol: 'http/protobuf', captureContent: false } } satisfies Partial<Config>;

/** A server exporting to `receiver` (the exporter reads its endpoint from the environment, as in production). */
async function tracedServer(t: Parameters<typeof startServer>[0], receiver: OtlpReceiver, overrides: Partial<Config> = protobuf): Promise<Running> {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  return startServer(t, overrides);
}

/** The session's event timestamps by type, in nanoseconds as the span times are (micro-second precision: float seconds). */
async function eventTimes(srv: Running, session: string): Promise<Record<string, { ns: bigint; seq: number }>> {
  const { events } = (await srv.get(`/v1/sessions/${session}/events`)).json;
  return Object.fromEntries(events.map((e: any) => [e.result.type, { ns: BigInt(Math.round(e.result.timestamp * 1e6)) * 1000n, seq: e.result.seq }]));
}

const near = (a: bigint, b: bigint, ns = 2000n) => (a > b ? a - b : b - a) <= ns;

t.test('a started and completed call: one execute_tool span from tool_starting to tool_completed, a child of the producer span (protobuf)', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const srv = await tracedServer(t, receiver);
  t.equal((await srv.post('/v1/sessions/s1/tool-calls', { call_id: 'c1', name: 'grep', args: { q: 'x' } }, { traceparent: traceparent() })).status, 202);
  await sleep(30);
  const reply = await srv.post('/v1/sessions/s1/tool-results', { call_id: 'c1', name: 'grep', result: { content: 'found' } });
  t.equal(reply.status, 202);
  const [span] = (await receiver.received(1)) as [ReceivedSpan];
  const times = await eventTimes(srv, 's1');
  t.equal(span.name, 'execute_tool grep');
  t.equal(span.kind, 1, 'kind INTERNAL');
  t.equal(span.encoding, 'application/x-protobuf');
  t.equal(span.traceId, TRACE_ID, 'in the producer trace (from tool-calls: tool-results sent none)');
  t.equal(span.parentSpanId, PARENT_ID, 'a child of the producer span');
  t.same(span.attributes, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'grep',
    'gen_ai.tool.call.id': 'c1',
    'gen_ai.conversation.id': 's1',
    'horologium.tool_starting.seq': 1,
    'horologium.tool_completed.seq': 2,
    'horologium.queue_seq': reply.json.queue_seq,
  });
  t.same(span.status, { code: 0, message: '' }, 'status unset: the call did not fail');
  t.ok(near(span.startNs, times.tool_starting!.ns), `starts at tool_starting (${span.startNs} vs ${times.tool_starting!.ns})`);
  t.ok(near(span.endNs, times.tool_completed!.ns), `ends at tool_completed (${span.endNs} vs ${times.tool_completed!.ns})`);
  t.ok(span.endNs - span.startNs >= 30_000_000n, 'lasts as long as the call ran');
  t.equal(span.resource['service.name'], 'horologium');
  t.equal(typeof span.resource['service.version'], 'string');
  await srv.post('/v1/sessions/s1/tool-results', { call_id: 'c1', name: 'grep', result: { content: 'found' } });
  await sleep(300);
  t.equal(receiver.spans.length, 1, 'a repeated result (200, duplicate) makes no second span');
});

t.test('a result alone: the span starts execution_time before it; an error result is an error span; a traceparent on tool-results wins', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const srv = await tracedServer(t, receiver);
  await srv.post('/v1/sessions/s2/tool-calls', { call_id: 'c2', name: 'fetch' }, { traceparent: traceparent('1111111111111111') });
  const failed = await srv.post('/v1/sessions/s2/tool-results', { call_id: 'c2', name: 'fetch', result: 'timeout', is_error: true }, { traceparent: traceparent('2222222222222222') });
  t.equal(failed.status, 202);
  const alone = await srv.post('/v1/sessions/s2/tool-results', { call_id: 'c3', name: 'sleep', result: 1, execution_time: 1.5 });
  t.equal(alone.status, 202);
  const bare = await srv.post('/v1/sessions/s2/tool-results', { call_id: 'c4', name: 'noop', result: null });
  t.equal(bare.status, 202);
  const spans = await receiver.received(3);
  const byCall = Object.fromEntries(spans.map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
  const { events } = (await srv.get('/v1/sessions/s2/events')).json;
  const endOf = (seq: number) => BigInt(Math.round(events.find((e: any) => e.result.seq === seq).result.timestamp * 1e6)) * 1000n;

  const error = byCall.c2 as ReceivedSpan;
  t.equal(error.parentSpanId, '2222222222222222', "tool-results' own traceparent is the parent");
  t.same(error.status.code, 2, 'status ERROR');
  t.equal(error.attributes['error.type'], 'tool_error');

  const timed = byCall.c3 as ReceivedSpan;
  t.equal(timed.name, 'execute_tool sleep');
  t.equal(timed.parentSpanId, '', 'no traceparent anywhere: a root span');
  t.ok(near(timed.endNs, endOf(alone.json.event_seq)), 'ends at tool_completed');
  t.ok(near(timed.endNs - timed.startNs, 1_500_000_000n), `starts execution_time (1.5 s) before (${timed.endNs - timed.startNs} ns)`);
  t.notOk('horologium.tool_starting.seq' in timed.attributes, 'no tool_starting seq without tool-calls');
  t.notOk('error.type' in timed.attributes);

  const point = byCall.c4 as ReceivedSpan;
  t.equal(point.startNs, point.endNs, 'neither tool-calls nor execution_time: a span of no length at the result');
});

t.test('content only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and then only the previews (JSON export)', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const srv = await tracedServer(t, receiver, { tracing: { protocol: 'http/json', captureContent: true }, previewLimit: 20 });
  // Raw JSON text: numbers beyond 2^53 as sent.
  await srv.post('/v1/sessions/s3/tool-calls', `{"call_id":"c1","name":"grep","args":{"q":"${'a'.repeat(50)}","n":12345678901234567890}}`);
  await srv.post('/v1/sessions/s3/tool-results', { call_id: 'c1', name: 'grep', result: { content: 'b'.repeat(100) } });
  await srv.post('/v1/sessions/s3/tool-results', '{"call_id":"c2","name":"read_file","result":{"path":"a.ts","content":"x","size":10000000000000000001}}');
  const spans = await receiver.received(2);
  const byCall = Object.fromEntries(spans.map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
  t.equal(byCall.c1!.encoding, 'application/json');
  t.equal(byCall.c1!.attributes['gen_ai.tool.call.arguments'], `{"q":"${'a'.repeat(17)}...","n":12345678901234567890}`, "the event's arguments: long strings cut, numbers as sent");
  t.equal(byCall.c1!.attributes['gen_ai.tool.call.result'], `${'b'.repeat(17)}...`, 'the preview, not the result');
  t.equal(byCall.c2!.attributes['gen_ai.tool.call.result'], '{"path":"a.ts","content":"x","size":10000000000000000001}', 'a passed-through object as its JSON text');
  t.notOk('gen_ai.tool.call.arguments' in byCall.c2!.attributes, 'no args: no arguments attribute');

  const plain = await startOtlpReceiver(t);
  const quiet = await tracedServer(t, plain);
  await quiet.post('/v1/sessions/s3/tool-results', { call_id: 'c1', name: 'grep', args: { q: 1 }, result: 'secret' });
  const [span] = (await plain.received(1)) as [ReceivedSpan];
  t.same(Object.keys(span.attributes).filter((k) => k.startsWith('gen_ai.tool.call.') && k !== 'gen_ai.tool.call.id'), [], 'without it: neither arguments nor result');
});

t.test('a call never completed is ended as an error when its session is deleted (DELETE, and the session TTL)', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const srv = await tracedServer(t, receiver, { ...protobuf, sessionTtlMs: 2000, retentionIntervalMs: 200 });
  t.equal((await srv.post('/v1/sessions/del/tool-calls', { call_id: 'hung', name: 'shell' }, { traceparent: traceparent() })).status, 202);
  const startedAt = (await eventTimes(srv, 'del')).tool_starting!.ns;
  await srv.post('/v1/sessions/del/tool-calls', { call_id: 'done', name: 'grep' });
  await srv.post('/v1/sessions/del/tool-results', { call_id: 'done', name: 'grep', result: 'x' });
  await receiver.received(1);
  const deletedAt = BigInt(Date.now()) * 1_000_000n;
  t.equal((await fetch(`${srv.url}/v1/sessions/del`, { method: 'DELETE' })).status, 200);
  const spans = await receiver.received(2);
  const hung = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'hung') as ReceivedSpan;
  t.equal(hung.name, 'execute_tool shell');
  t.same(hung.status, { code: 2, message: 'the session was deleted before the call completed' });
  t.equal(hung.attributes['error.type'], 'call_not_completed');
  t.equal(hung.attributes['gen_ai.conversation.id'], 'del');
  t.equal(hung.attributes['horologium.tool_starting.seq'], 1);
  t.equal(hung.parentSpanId, PARENT_ID, "the parent kept from tool-calls");
  t.ok(near(hung.startNs, startedAt), 'from its tool_starting');
  t.ok(hung.endNs >= deletedAt - 5_000_000n && hung.endNs <= BigInt(Date.now()) * 1_000_000n, 'to the deletion');
  t.equal(spans.filter((s) => s.attributes['gen_ai.tool.call.id'] === 'done').length, 1, 'the completed call has its one span, no second');

  // The TTL: an idle session goes after 2 s, its open call with it.
  await srv.post('/v1/sessions/idle/tool-calls', { call_id: 'forgotten', name: 'wait' });
  const [expired] = (await receiver.received(3, 10_000)).filter((s) => s.attributes['gen_ai.tool.call.id'] === 'forgotten') as [ReceivedSpan];
  t.equal(expired.attributes['error.type'], 'call_not_completed');
  t.equal(expired.attributes['gen_ai.conversation.id'], 'idle');
  t.equal((await srv.get('/v1/sessions/idle')).status, 404, 'the session is gone');
});

t.test('tracing off (OTEL_TRACES_EXPORTER unset): no span, even with an endpoint set', async (t) => {
  const receiver = await startOtlpReceiver(t);
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  const srv = await startServer(t);
  t.equal(srv.config.tracing, undefined);
  await srv.post('/v1/sessions/s4/tool-calls', { call_id: 'c1', name: 'grep' }, { traceparent: traceparent() });
  t.equal((await srv.post('/v1/sessions/s4/tool-results', { call_id: 'c1', name: 'grep', result: 'x' }, { traceparent: traceparent() })).status, 202);
  await srv.app.close();
  await sleep(300);
  t.equal(receiver.spans.length, 0);
});

t.test('configured by the standard variables in a real process; spans batched at shutdown are sent before it exits', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const server = await spawnServer(t, {
    HOROLOGIUM_STORE: 'memory:',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'agents-prod',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,team=tools',
    // A batch that would wait a minute: only the shutdown flush can send it.
    OTEL_BSP_SCHEDULE_DELAY: '60000',
  });
  const api = client(server.url);
  t.equal((await api.post('/v1/sessions/p1/tool-results', { call_id: 'c1', name: 'grep', result: 'x' }, { traceparent: traceparent() })).status, 202);
  await sleep(200);
  t.equal(receiver.spans.length, 0, 'still in the batch');
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
  const [span] = (await receiver.received(1, 5000)) as [ReceivedSpan];
  t.equal(span.name, 'execute_tool grep');
  t.equal(span.encoding, 'application/json', 'OTEL_EXPORTER_OTLP_PROTOCOL=http/json');
  t.equal(span.parentSpanId, PARENT_ID);
  t.equal(span.resource['service.name'], 'agents-prod', 'OTEL_SERVICE_NAME');
  t.equal(span.resource['deployment.environment.name'], 'staging', 'OTEL_RESOURCE_ATTRIBUTES');
  t.equal(span.resource.team, 'tools');
});

t.test("the JS producer sends the active span's context: the server's span is its child", async (t) => {
  // An application that uses OpenTelemetry: a tracer provider, the W3C propagator, async context.
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new BasicTracerProvider();
  t.teardown(() => {
    context.disable();
    propagation.disable();
  });
  const receiver = await startOtlpReceiver(t);
  const srv = await tracedServer(t, receiver);
  const producer = new Producer({ url: srv.url });
  const agentSpan = provider.getTracer('agent').startSpan('agent step');
  const value = await context.with(trace.setSpan(context.active(), agentSpan), () => producer.track('js1', 'grep', { q: 1 }, async () => 'found'));
  agentSpan.end();
  t.equal(value, 'found');
  // Outside any span: no context is sent.
  await producer.toolResult('js1', { call_id: 'plain', name: 'noop', result: 1 });
  const spans = await receiver.received(2);
  const byCall = Object.fromEntries(spans.map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
  const tracked = spans.find((s) => s.name === 'execute_tool grep') as ReceivedSpan;
  t.equal(tracked.traceId, agentSpan.spanContext().traceId, "in the agent's trace");
  t.equal(tracked.parentSpanId, agentSpan.spanContext().spanId, 'a child of the active span');
  t.equal(byCall.plain!.parentSpanId, '', 'no active span: a root span');
});

t.test('a receiver that never answers does not hold the shutdown up: the process exits 0 within the bound', async (t) => {
  const silent = createServer(() => undefined);
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  t.teardown(() => silent.close());
  const server = await spawnServer(t, {
    HOROLOGIUM_STORE: 'memory:',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '60000',
  });
  t.equal((await client(server.url).post('/v1/sessions/q/tool-results', { call_id: 'c1', name: 'grep', result: 'x' })).status, 202, 'the write does not wait for tracing');
  const stopping = Date.now();
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
  t.ok(Date.now() - stopping < 9000, `stopped in ${Date.now() - stopping} ms (the spans get 5 s, the exporter's own timeout is 10 s)`);
});

if (requireRedis(t)) {
  t.test('two instances on Redis: started on A, completed on B: one span from B with A’s start and the producer parent', async (t) => {
    const redis = await startRedis(t);
    const receiverA = await startOtlpReceiver(t);
    const a = await tracedServer(t, receiverA, { ...protobuf, store: redis.url });
    const receiverB = await startOtlpReceiver(t);
    const b = await tracedServer(t, receiverB, { ...protobuf, store: redis.url });
    t.equal((await a.post('/v1/sessions/r1/tool-calls', { call_id: 'c1', name: 'build' }, { traceparent: traceparent() })).status, 202);
    await sleep(50);
    const done = await b.post('/v1/sessions/r1/tool-results', { call_id: 'c1', name: 'build', result: 'ok' });
    t.equal(done.status, 202);
    const [span] = (await receiverB.received(1)) as [ReceivedSpan];
    const times = await eventTimes(a, 'r1');
    t.equal(span.parentSpanId, PARENT_ID, 'the parent kept with the call record on Redis');
    t.equal(span.traceId, TRACE_ID);
    t.ok(near(span.startNs, times.tool_starting!.ns), 'the start A committed');
    t.ok(near(span.endNs, times.tool_completed!.ns), 'the end B committed');
    t.equal(span.attributes['horologium.tool_starting.seq'], 1);
    await sleep(300);
    t.equal(receiverA.spans.length, 0, 'A, which saw only the start, made no span');
    t.equal(receiverB.spans.length, 1);
  });
}
