/**
 * A session as the Vercel AI SDK's UI message stream, protocol v1 (docs/protocol.md section 13):
 * what `useChat` (through DefaultChatTransport's reconnect) and `readUIMessageStream` read. One
 * session is one assistant message whose parts are its tool calls and its other events:
 *
 * - the response opens with `start` (`messageId`: the session);
 * - tool_starting → `tool-input-start`, `tool-input-available` (`input`: the call's `arguments`);
 * - tool_completed → `tool-input-available` again (so that a stream resumed after the call began
 *   still knows the call), then `tool-output-available` (`output`: the preview) or, for an error
 *   result, `tool-output-error` (`errorText`: the preview as text);
 * - any other event → `data-<type>` with `id` `<epoch>:<seq>` and the event's data.
 *
 * Tool parts are dynamic (the client need not know the agent's tools) and `providerExecuted` (the
 * agent ran them: useChat must not run them again through `onToolCall`). Every chunk of an event
 * is keyed by its call id or its event id, so reading an event twice (a resume from the start)
 * changes nothing: a client that resumes ends with the message of one that watched throughout.
 * Chunks are built by concatenating the frame's own JSON texts, so numbers and key order survive.
 */
import type { SseFormat } from './sse.js';
import { statusView } from './status-view.js';

/** The response header the AI SDK's transports look for. */
export const UI_MESSAGE_STREAM_HEADERS = { 'x-vercel-ai-ui-message-stream': 'v1' } as const;

/** The data part of a later `subscribed` (the log started again, or events were missed for good). */
export const UI_RESUBSCRIBED = 'data-horologium-subscribed';

const record = (json: string): string => `data: ${json}\n\n`;
const DONE = 'data: [DONE]\n\n';
const str = (value: unknown): string => JSON.stringify(String(value ?? ''));

/** The chunks (JSON texts) of one status frame. */
export function uiMessageChunks(frame: string, epoch: string, seq: number): string[] {
  const view = statusView(frame);
  const { type, data } = view;
  if (type !== 'tool_starting' && type !== 'tool_completed') {
    return [`{"type":${JSON.stringify(`data-${type}`)},"id":${JSON.stringify(`${epoch}:${seq}`)},"data":${view.dataText()}}`];
  }
  const call = `"toolCallId":${str(data.call_id)}`;
  const tool = `${call},"toolName":${str(data.name)},"dynamic":true,"providerExecuted":true`;
  const inputAvailable = `{"type":"tool-input-available",${tool},"input":${view.dataMemberText('arguments') ?? 'null'}}`;
  if (type === 'tool_starting') return [`{"type":"tool-input-start",${tool}}`, inputAvailable];
  const preview = view.dataMemberText('result') ?? 'null';
  if (data.is_error === true) {
    // errorText is a string: a text preview as it is, any other preview as its JSON text.
    const errorText = typeof data.result === 'string' ? preview : JSON.stringify(preview);
    return [inputAvailable, `{"type":"tool-output-error",${call},"errorText":${errorText},"dynamic":true,"providerExecuted":true}`];
  }
  return [inputAvailable, `{"type":"tool-output-available",${call},"output":${preview},"dynamic":true,"providerExecuted":true}`];
}

/** The UI message stream of one session. */
export function uiMessageStreamFormat(session: string): SseFormat {
  let subscribed = false;
  return {
    name: 'ui-message',
    headers: UI_MESSAGE_STREAM_HEADERS,
    opening: () => record(`{"type":"start","messageId":${JSON.stringify(session)}}`),
    status: (frame, epoch, seq) => {
      const records = uiMessageChunks(frame, epoch, seq).map(record);
      records[records.length - 1] = `id: ${epoch}:${seq}\n${records[records.length - 1]}`;
      return records.join('');
    },
    message: (method, frame) => {
      const result = (JSON.parse(frame) as { result: { message?: string } }).result;
      // The first `subscribed` is the stream's start; a later one is told as a data part (one id,
      // so it is replaced, not repeated) before the log as it now is.
      if (method === 'subscribed') {
        if (!subscribed) return ((subscribed = true), '');
        return record(`{"type":${JSON.stringify(UI_RESUBSCRIBED)},"id":"horologium-subscribed","data":${JSON.stringify(result)}}`);
      }
      // A deleted session finishes the message and the stream.
      if (method === 'unsubscribed') return record('{"type":"finish"}') + DONE;
      if (method === 'error') return record(`{"type":"error","errorText":${JSON.stringify(result.message ?? '')}}`);
      return '';
    },
  };
}
