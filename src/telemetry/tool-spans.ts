/**
 * Tool executions as OpenTelemetry spans, as the GenAI semantic conventions define them: one
 * `execute_tool {gen_ai.tool.name}` span (kind INTERNAL) per completed call, from its tool_starting
 * event to its tool_completed event (or `execution_time` before the result when the call was never
 * started with tool-calls), a child of the producer's span when a W3C `traceparent` came with
 * tool-results or, before it, with tool-calls (kept in the call's record, so an instance that did
 * not see the start still gives the span its parent and its start).
 *
 * Off unless OTEL_TRACES_EXPORTER=otlp (config/config.ts, `TracingSettings`): then nothing here is loaded
 * and the routes call nothing. On, the SDK's own code reads the standard variables it knows (the
 * endpoint and headers, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, the batch processor's
 * OTEL_BSP_*), and spans leave in batches (BatchSpanProcessor) off the request path.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, type Attributes, type Context, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { jsonText, member, parseJson, type JsonNode, type JsonObject } from '../json/lossless.js';
import { waitAtMost } from '../common/wait-at-most.js';
import type { TracingSettings } from '../config/config.js';
import type { OpenCall, TraceContext } from '../store/types.js';

/** What one completed call tells its span. */
export interface CompletedCall {
  session: string;
  callId: string;
  name: string;
  isError: boolean;
  /** The tool_starting event (seconds since the epoch, seq), when the call was started with tool-calls. */
  started: { at: number; seq: number } | null;
  /** The tool_completed event: timestamp (seconds) and seq. */
  completedAt: number;
  completedSeq: number;
  queueSeq: number;
  /** Seconds, the producer's or measured; null when neither. */
  executionTime: number | null;
  /** The trace context of tool-results, or else of tool-calls. */
  traceContext: TraceContext | undefined;
  /** The tool_completed status frame (its data's `arguments` and `result` are the captured content). */
  frame: string;
}

/** The `error.type` of a call whose result came with `is_error: true`. */
export const TOOL_ERROR = 'tool_error';
/** The `error.type` of a call that never completed before its session was deleted. */
export const CALL_NOT_COMPLETED = 'call_not_completed';

/** How long shutdown waits for the last spans to be sent (the whole shutdown has 15 s). */
const CLOSE_WAIT_MS = 5000;

/** Runs one span's work; an error in it is reported as a warning and goes no further. */
function guarded(work: () => void): void {
  try {
    work();
  } catch (err) {
    process.emitWarning(`a trace span was not made: ${(err as Error).message}`);
  }
}

/** A W3C traceparent (version 00 or a later one) and a bounded tracestate, as the headers gave them. */
export function traceContextOf(headers: Record<string, string | string[] | undefined>): TraceContext | undefined {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string' || !/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$/.test(traceparent.trim())) return undefined;
  const tracestate = headers.tracestate;
  return typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= 512 ? { traceparent: traceparent.trim(), tracestate } : { traceparent: traceparent.trim() };
}

export class ToolSpans {
  private constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    private readonly captureContent: boolean,
  ) {}

  /** Loads the SDK and the exporter the protocol names (only now: tracing off loads none of it). */
  static async open(settings: TracingSettings, version: string): Promise<ToolSpans> {
    const [{ BasicTracerProvider, BatchSpanProcessor }, { resourceFromAttributes, detectResources, envDetector }, { W3CTraceContextPropagator }] = await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
    ]);
    const exporter: SpanExporter =
      settings.protocol === 'http/json'
        ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
        : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the environment detector) override these defaults.
    const resource = resourceFromAttributes({ 'service.name': 'horologium', 'service.version': version }).merge(detectResources({ detectors: [envDetector] }));
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
    return new ToolSpans(provider, provider.getTracer('horologium', version), new W3CTraceContextPropagator(), settings.captureContent);
  }

  /** The span of a completed call. Never throws: a span that cannot be made is not the request's failure. */
  completed(call: CompletedCall): void {
    guarded(() => this.completedSpan(call));
  }

  private completedSpan(call: CompletedCall): void {
    // From tool_starting when there was one; else the execution time before the result; else a point.
    const start = call.started?.at ?? (call.executionTime === null ? call.completedAt : call.completedAt - call.executionTime);
    const attributes: Attributes = {
      ...this.common(call.session, call.callId, call.name),
      'horologium.tool_completed.seq': call.completedSeq,
      'horologium.queue_seq': call.queueSeq,
    };
    if (call.started) attributes['horologium.tool_starting.seq'] = call.started.seq;
    if (call.isError) attributes['error.type'] = TOOL_ERROR;
    if (this.captureContent) Object.assign(attributes, capturedContent(call.frame));
    const span = this.tracer.startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, startTime: start * 1000, attributes }, this.parent(call.traceContext));
    if (call.isError) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(call.completedAt * 1000);
  }

  /** Calls started and never completed, whose session was just deleted (DELETE or the TTL): each span ends now, as an error. */
  abandoned(calls: OpenCall[], now = Date.now()): void {
    for (const call of calls) guarded(() => this.abandonedSpan(call, now));
  }

  private abandonedSpan(call: OpenCall, now: number): void {
    const attributes: Attributes = {
      ...this.common(call.session, call.callId, call.name),
      'horologium.tool_starting.seq': call.eventSeq,
      'error.type': CALL_NOT_COMPLETED,
    };
    const span = this.tracer.startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, startTime: call.startedAt * 1000, attributes }, this.parent(call.traceContext));
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the session was deleted before the call completed' });
    span.end(Math.max(call.startedAt * 1000, now));
  }

  /**
   * Sends what is batched and stops the exporter (shutdown: spans of the last requests are not
   * lost), waiting at most CLOSE_WAIT_MS for a receiver that does not answer.
   */
  async close(): Promise<void> {
    await waitAtMost(this.provider.shutdown(), CLOSE_WAIT_MS);
  }

  private common(session: string, callId: string, name: string): Attributes {
    return { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.id': callId, 'gen_ai.conversation.id': session };
  }

  private parent(traceContext: TraceContext | undefined): Context {
    return traceContext ? this.propagator.extract(ROOT_CONTEXT, traceContext, defaultTextMapGetter) : ROOT_CONTEXT;
  }
}

/**
 * The previews as the tool_completed event carries them: `gen_ai.tool.call.arguments` (the
 * arguments' JSON text) and `gen_ai.tool.call.result` (the preview text, or a passed-through
 * object's JSON text). Read losslessly from the frame, so big numbers keep their digits.
 */
function capturedContent(frame: string): Attributes {
  const doc = parseJson(frame);
  const result = member(doc.root as JsonObject, 'result') as JsonObject;
  const data = member(result, 'data') as JsonObject;
  const attributes: Attributes = {};
  const args = member(data, 'arguments');
  if (args && args.kind !== 'null') attributes['gen_ai.tool.call.arguments'] = jsonText(doc, args);
  const preview = member(data, 'result') as JsonNode;
  attributes['gen_ai.tool.call.result'] = preview.kind === 'string' ? preview.value : jsonText(doc, preview);
  return attributes;
}
