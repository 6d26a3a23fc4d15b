/**
 * The data of the two tool events (docs/protocol.md, "Producers"), built as JSON text from parts
 * that are already canonical JSON texts, so that previews and arguments keep their numbers and key
 * order. This is the one place their members are put together: a new member of `tool_completed`
 * is a field of ToolCompletedFields, a line here, and the route that supplies it.
 */
import type { ArgumentTexts } from '../preview/arguments.js';

export interface ToolStartingFields {
  name: string;
  callId: string;
  args: ArgumentTexts;
}

export function toolStartingData(f: ToolStartingFields): string {
  return `{"name":${JSON.stringify(f.name)},"call_id":${JSON.stringify(f.callId)},"args":${f.args.echo},"arguments":${f.args.arguments}}`;
}

/**
 * What the tool-results route knows of its event. Plain data, so that a write can cross to
 * another thread (sqlite's writer) or be composed again after a concurrent change (redis).
 */
export interface ToolCompletedFields {
  name: string;
  callId: string;
  isError: boolean;
  /** JSON text of the preview. */
  previewJson: string;
  /** JSON text of `arguments` from this body's args; null when it sent none. */
  argumentsJson: string | null;
}

/** What only the store knows when it commits the result. */
export interface ToolCompletedContext {
  /** JSON text of the execution time in effect (the producer's, measured, or null). */
  executionTimeJson: string;
  /** JSON text of `arguments` of the earlier tool-calls, used when the body has none. */
  startedArgumentsJson: string;
}

export function toolCompletedData(f: ToolCompletedFields, c: ToolCompletedContext): string {
  return (
    `{"name":${JSON.stringify(f.name)},"call_id":${JSON.stringify(f.callId)},"execution_time":${c.executionTimeJson},` +
    `"is_error":${f.isError},"result":${f.previewJson},"arguments":${f.argumentsJson ?? c.startedArgumentsJson}}`
  );
}
