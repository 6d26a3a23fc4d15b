/**
 * The producer SDK for agent backends (docs/protocol.md section 4, scope `publish`): post a tool
 * call, its result, or any other status event, and `track` a tool run end to end. Every post is
 * retried (HttpClient); tool calls and results are idempotent on the server by `call_id`, and events
 * by the `event_id` this SDK gives each of them (unless the caller gives one), so a retry after a
 * lost reply answers `duplicate: true` and stores nothing twice.
 */
import { HttpClient, CallIdConflictError, HorologiumRequestError, type HttpOptions, type RequestSpec } from '../sdk-common/http-client.js';
import { jsonTextOf, objectBody, type RawJson } from './raw-json.js';

export type ProducerOptions = HttpOptions;

/** A JSON value, or JSON text to send as it is (rawJson). */
export type JsonInput = unknown;

export interface ToolCallInput {
  /** Generated (a random UUID) when omitted; returned in the reply. */
  call_id?: string;
  name: string;
  args?: JsonInput;
}

export interface ToolResultInput {
  call_id: string;
  name: string;
  /** The complete result; a `rawJson(text)` is sent as that text, byte for byte. */
  result: JsonInput;
  args?: JsonInput;
  /** Seconds. Measured by the server from the tool call when omitted. */
  execution_time?: number;
  is_error?: boolean;
}

export interface EventInput {
  type: string;
  data: Record<string, unknown> | RawJson;
  /** The event's idempotency key; a new UUID when omitted (the same one on every retry of this call). */
  event_id?: string;
}

export interface ToolCallReply {
  call_id: string;
  event_seq: number;
  duplicate: boolean;
}

export interface ToolResultReply {
  call_id: string;
  queue_seq: number;
  event_seq: number;
  duplicate: boolean;
}

export interface TrackOptions<T> {
  callId?: string;
  /** What to post as the result of a value `fn` returned (default: the value itself). */
  result?(value: T): JsonInput;
  /** What to post as the result when `fn` threw (default `{"error": message}`, with is_error). */
  error?(err: unknown): JsonInput;
}

export class Producer {
  private readonly http: HttpClient;

  constructor(options: ProducerOptions) {
    this.http = new HttpClient(options);
  }

  /** Publishes `tool_starting`. The same call_id again is answered as a duplicate. */
  async toolCall(session: string, call: ToolCallInput): Promise<ToolCallReply> {
    const callId = call.call_id ?? globalThis.crypto.randomUUID();
    const body = objectBody([
      ['call_id', JSON.stringify(callId)],
      ['name', JSON.stringify(call.name)],
      ['args', call.args === undefined ? undefined : jsonTextOf(call.args)],
    ]);
    const reply = await this.post<{ event_seq: number; duplicate?: boolean }>(session, 'tool-calls', body, callId);
    return { call_id: callId, event_seq: reply.event_seq, duplicate: reply.duplicate === true };
  }

  /** Commits the result to the model queue and publishes `tool_completed`; idempotent by call_id. */
  async toolResult(session: string, result: ToolResultInput): Promise<ToolResultReply> {
    const body = objectBody([
      ['call_id', JSON.stringify(result.call_id)],
      ['name', JSON.stringify(result.name)],
      ['args', result.args === undefined ? undefined : jsonTextOf(result.args)],
      ['execution_time', result.execution_time === undefined ? undefined : JSON.stringify(result.execution_time)],
      ['is_error', result.is_error === undefined ? undefined : JSON.stringify(result.is_error)],
      ['result', jsonTextOf(result.result === undefined ? null : result.result)],
    ]);
    return this.post<ToolResultReply>(session, 'tool-results', body, result.call_id);
  }

  /** Publishes any other status event. */
  async event(session: string, event: EventInput): Promise<{ event_seq: number; duplicate: boolean }> {
    const body = objectBody([
      ['type', JSON.stringify(event.type)],
      ['data', jsonTextOf(event.data)],
      ['event_id', JSON.stringify(event.event_id ?? globalThis.crypto.randomUUID())],
    ]);
    const reply = await this.post<{ event_seq: number; duplicate?: boolean }>(session, 'events', body);
    return { event_seq: reply.event_seq, duplicate: reply.duplicate === true };
  }

  /**
   * Posts the call, runs `fn`, and posts what it returned (or threw, as an error result) with the
   * time it took; returns what `fn` returned, or rethrows what it threw once the error is posted.
   * If the call cannot be posted, `fn` does not run.
   */
  async track<T>(session: string, name: string, args: JsonInput, fn: () => T | Promise<T>, options: TrackOptions<T> = {}): Promise<T> {
    const { call_id } = await this.toolCall(session, { ...(options.callId === undefined ? {} : { call_id: options.callId }), name, args });
    const started = performance.now();
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      const result = options.error ? options.error(err) : { error: err instanceof Error ? err.message : String(err) };
      await this.toolResult(session, { call_id, name, args, result, is_error: true, execution_time: seconds(started) });
      throw err;
    }
    const result = options.result ? options.result(value) : value;
    await this.toolResult(session, { call_id, name, args, result, execution_time: seconds(started) });
    return value;
  }

  private async post<T>(session: string, what: string, body: string | Blob, callId?: string): Promise<T> {
    const spec: RequestSpec = { method: 'POST', path: `/v1/sessions/${encodeURIComponent(session)}/${what}`, body };
    try {
      const reply = await this.http.request(spec);
      return JSON.parse(reply.text) as T;
    } catch (err) {
      if (err instanceof HorologiumRequestError && err.code === 'CALL_ID_CONFLICT' && callId !== undefined) {
        throw new CallIdConflictError(callId, err.message);
      }
      throw err;
    }
  }
}

function seconds(startedMs: number): number {
  return Math.round(performance.now() - startedMs) / 1000;
}
