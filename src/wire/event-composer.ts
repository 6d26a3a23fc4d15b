/**
 * The event composer: the one place a stored event is built, its data and its frame, from plain
 * fields (docs/protocol.md, "Producers" and "Stream"). The routes hand it what they read from the
 * body, every backend calls it when it commits, and the rest of the store deals only in the texts
 * it returns. A new member of `tool_completed` is a field of ToolCompletedFields, a line here, and
 * the route that supplies it; no backend changes.
 *
 * Everything is built by string concatenation from JSON texts that are already canonical, so the
 * numbers and key order of event data survive and each frame is built once, whoever receives it.
 */
import type { ArgumentTexts } from '../preview/arguments.js';

/** What the server stamps on an event when it accepts it. */
export interface EventStamp {
  session: string;
  /** Seconds since the epoch. */
  timestamp: number;
  uuid: string;
}

/**
 * An event composed but for its seq: a backend assigns the seq inside its commit (Redis in Lua),
 * keeps `head` and the seq side by side, and `frameOf` joins them whenever the frame is needed.
 */
export interface ComposedEvent {
  type: string;
  /** The status frame's text up to its seq. */
  head: string;
}

/** What the tool-calls route knows of its tool_starting event. */
export interface ToolStartingFields {
  name: string;
  callId: string;
  args: ArgumentTexts;
}

/**
 * What the tool-results route knows of its tool_completed event. Plain data, so that a write can
 * cross to another thread (sqlite's writer) or be composed again after a concurrent change (redis).
 */
export interface ToolCompletedFields {
  name: string;
  callId: string;
  isError: boolean;
  /** JSON text of the preview. */
  previewJson: string;
  /** JSON text of `arguments` from this body's args; null when it sent none. */
  argumentsJson: string | null;
  /** v1.2: UTF-8 bytes of the full result's JSON text as kept on the model route (message.content). */
  resultBytes: number;
  /** v1.2: whether truncation shortened the preview's text. */
  truncated: boolean;
}

/** What only the store knows when it commits a result. */
export interface ToolCompletedContext {
  /** JSON text of the execution time in effect (the producer's, measured, or null). */
  executionTimeJson: string;
  /** JSON text of `arguments` of the earlier tool-calls; null when there was none. */
  startedArgumentsJson: string | null;
}

/** A generic event (the events route): its data is the producer's JSON text as sent. */
export function composeEvent(type: string, dataJson: string, stamp: EventStamp): ComposedEvent {
  return { type, head: statusFrameHead(type, dataJson, stamp) };
}

export function composeToolStarting(f: ToolStartingFields, stamp: EventStamp): ComposedEvent {
  const data = `{"name":${JSON.stringify(f.name)},"call_id":${JSON.stringify(f.callId)},"args":${f.args.echo},"arguments":${f.args.arguments}}`;
  return composeEvent('tool_starting', data, stamp);
}

export function composeToolCompleted(f: ToolCompletedFields, c: ToolCompletedContext, stamp: EventStamp): ComposedEvent {
  const data =
    `{"name":${JSON.stringify(f.name)},"call_id":${JSON.stringify(f.callId)},"execution_time":${c.executionTimeJson},` +
    `"is_error":${f.isError},"result":${f.previewJson},"arguments":${f.argumentsJson ?? c.startedArgumentsJson ?? 'null'},` +
    `"result_bytes":${f.resultBytes},"truncated":${f.truncated}}`;
  return composeEvent('tool_completed', data, stamp);
}

/** The status frame of a composed event once its seq is known: the HorologiumAeternum framing with `session` and `seq`. */
export function frameOf(head: string, seq: number): string {
  return `${head}${seq}}}`;
}

function statusFrameHead(type: string, dataJson: string, s: EventStamp): string {
  return (
    `{"method":"status","result":{"type":${JSON.stringify(type)},"data":${dataJson},` +
    `"timestamp":${s.timestamp},"uuid":${JSON.stringify(s.uuid)},"session":${JSON.stringify(s.session)},"seq":`
  );
}
