/**
 * Producer routes (docs/protocol.md section 4, scope `publish`): tool-calls, tool-results, events.
 * Each validates, builds the event data from the lossless tree, and replies only after the store
 * has committed.
 */
import type { FastifyInstance } from 'fastify';
import { HorologiumError } from '../common/errors.js';
import { fingerprint } from '../json/fingerprint.js';
import { jsonText, member, type JsonNode } from '../json/lossless.js';
import { argumentTexts, withLongStringsTruncated } from '../preview/arguments.js';
import { preview as previewOf } from '../preview/preview.js';
import type { AppContext } from '../app-context.js';
import { eventBodySchema, RESERVED_EVENT_TYPES, toolCallBodySchema, toolResultBodySchema } from '../wire/schemas.js';
import { objectBody, validBody } from '../http/json-body.js';
import { sessionOf } from '../http/params.js';
import { traceContextOf } from '../telemetry/tool-spans.js';

export function ingestRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { store, config, toolSpans } = ctx;
  const previewOptions = { limit: config.previewLimit, passthroughTools: config.passthroughTools };

  app.post('/v1/sessions/:session/tool-calls', { config: { scope: 'publish' } }, async (request, reply) => {
    const session = sessionOf(request);
    const body = objectBody(request);
    const fields = validBody(body, toolCallBodySchema);
    request.logContext.call_id = fields.call_id;
    const argsNode = member(body.object, 'args');
    const argsJson = argsNode ? jsonText(body.doc, argsNode) : null;
    const args = argumentTexts(body.doc, argsNode, config.previewLimit);
    // With tracing on, the producer's trace context is kept with the call: the span, made when the
    // result arrives (maybe at another instance), is its child even if tool-results brings none.
    const traceContext = toolSpans ? traceContextOf(request.headers) : undefined;
    const outcome = await store.startCall(session, {
      callId: fields.call_id,
      name: fields.name,
      args,
      argsJson,
      fingerprint: fingerprint(fields.name, argsJson),
      ...(traceContext ? { traceContext } : {}),
    });
    if (outcome.status === 'conflict') throw new HorologiumError('CALL_ID_CONFLICT', `call_id ${fields.call_id}: ${outcome.message}.`);
    if (outcome.status === 'duplicate') return reply.code(200).send({ event_seq: outcome.eventSeq, duplicate: true });
    return reply.code(202).send({ event_seq: outcome.eventSeq });
  });

  app.post('/v1/sessions/:session/tool-results', { config: { scope: 'publish' } }, async (request, reply) => {
    const started = process.hrtime.bigint();
    const session = sessionOf(request);
    const body = objectBody(request);
    const fields = validBody(body, toolResultBodySchema);
    request.logContext.call_id = fields.call_id;
    const { doc, object } = body;
    const resultNode = member(object, 'result') as JsonNode;
    const argsNode = member(object, 'args');
    const execNode = member(object, 'execution_time');
    const resultJson = jsonText(doc, resultNode);
    const argsJson = argsNode ? jsonText(doc, argsNode) : null;
    const preview = previewOf(doc, resultNode, fields.name, previewOptions);
    const bodyArguments = argsNode ? withLongStringsTruncated(doc, argsNode, config.previewLimit) : undefined;
    const isError = fields.is_error ?? false;
    const outcome = await store.completeCall(session, {
      callId: fields.call_id,
      name: fields.name,
      argsJson,
      resultJson,
      executionTimeJson: execNode && execNode.kind === 'number' ? jsonText(doc, execNode) : null,
      isError,
      fingerprint: fingerprint(fields.name, argsJson, resultJson),
      completed: {
        name: fields.name,
        callId: fields.call_id,
        isError,
        previewJson: preview.json,
        argumentsJson: bodyArguments ?? null,
        resultBytes: Buffer.byteLength(resultJson),
        truncated: preview.truncated,
      },
    });
    if (outcome.status === 'conflict') throw new HorologiumError('CALL_ID_CONFLICT', `call_id ${fields.call_id}: ${outcome.message}.`);
    const duplicate = outcome.status === 'duplicate';
    if (toolSpans && outcome.status === 'created') {
      const { timing } = outcome;
      toolSpans.completed({
        session,
        callId: fields.call_id,
        name: fields.name,
        isError,
        started: timing.started,
        completedAt: timing.completedAt,
        completedSeq: outcome.eventSeq,
        queueSeq: outcome.queueSeq,
        executionTime: timing.executionTime,
        traceContext: traceContextOf(request.headers) ?? timing.started?.traceContext,
        frame: outcome.event.frame,
      });
    }
    ctx.metrics.ingestDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return reply.code(duplicate ? 200 : 202).send({
      call_id: fields.call_id,
      queue_seq: outcome.queueSeq,
      event_seq: outcome.eventSeq,
      duplicate,
    });
  });

  app.post('/v1/sessions/:session/events', { config: { scope: 'publish' } }, async (request, reply) => {
    const session = sessionOf(request);
    const body = objectBody(request);
    const fields = validBody(body, eventBodySchema);
    if (RESERVED_EVENT_TYPES.has(fields.type)) {
      throw new HorologiumError('RESERVED_EVENT_TYPE', `Event type ${fields.type} is reserved; use tool-calls or tool-results.`);
    }
    const dataJson = jsonText(body.doc, member(body.object, 'data') as JsonNode);
    if (Buffer.byteLength(dataJson) > config.maxEventBytes) {
      throw new HorologiumError('EVENT_TOO_LARGE', `The event data is ${Buffer.byteLength(dataJson)} bytes as JSON text; at most ${config.maxEventBytes} are accepted.`);
    }
    if (fields.event_id === undefined) {
      const event = await store.appendEvent(session, fields.type, dataJson);
      return reply.code(202).send({ event_seq: event.seq });
    }
    const outcome = await store.appendKeyedEvent(session, fields.type, dataJson, { id: fields.event_id, fingerprint: fingerprint(fields.type, dataJson) });
    if (outcome.status === 'conflict') throw new HorologiumError('EVENT_ID_CONFLICT', `event_id ${fields.event_id}: ${outcome.message}.`);
    if (outcome.status === 'duplicate') return reply.code(200).send({ event_seq: outcome.eventSeq, duplicate: true });
    return reply.code(202).send({ event_seq: outcome.event.seq });
  });
}
