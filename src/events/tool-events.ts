/**
 * The data of the two tool events (CONTRACT.md section 4), built as JSON text from parts that are
 * already canonical JSON texts, so that previews and arguments keep their numbers and key order.
 */
import type { ArgumentTexts } from '../preview/arguments.js';

export function toolStartingData(name: string, callId: string, args: ArgumentTexts): string {
  return `{"name":${JSON.stringify(name)},"call_id":${JSON.stringify(callId)},"args":${args.echo},"arguments":${args.arguments}}`;
}

export function toolCompletedData(
  name: string,
  callId: string,
  executionTimeJson: string,
  isError: boolean,
  previewJson: string,
  argumentsJson: string,
): string {
  return (
    `{"name":${JSON.stringify(name)},"call_id":${JSON.stringify(callId)},"execution_time":${executionTimeJson},` +
    `"is_error":${isError},"result":${previewJson},"arguments":${argumentsJson}}`
  );
}
