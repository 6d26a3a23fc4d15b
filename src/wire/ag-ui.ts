/**
 * A session as AG-UI events (docs/protocol.md section 11), encoded by AG-UI's own encoder:
 * tool_starting → TOOL_CALL_START, TOOL_CALL_ARGS, TOOL_CALL_END; tool_completed →
 * TOOL_CALL_RESULT; anything else → CUSTOM. `arguments` and the preview are taken from the frame
 * with the lossless reader, so the JSON texts AG-UI carries keep their numbers and key order.
 */
import { EventType, type BaseEvent } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { SseFormat } from './sse.js';
import { statusView, type StatusView } from './status-view.js';

const encoder = new EventEncoder();

/**
 * What a tool_completed becomes in AG-UI: a tool message whose id is the event's uuid and whose
 * content is the preview as text (a string preview itself, any other its JSON text).
 */
export function agUiToolResult(view: StatusView): { messageId: string; content: string } {
  const preview = view.data.result;
  return { messageId: view.uuid, content: typeof preview === 'string' ? preview : (view.dataMemberText('result') ?? 'null') };
}

/** The AG-UI events of one status frame. */
export function agUiEvents(frame: string): BaseEvent[] {
  const view = statusView(frame);
  const { type, data, timestamp } = view;
  const ms = Math.round(timestamp * 1000);
  const callId = String(data.call_id ?? '');
  switch (type) {
    case 'tool_starting':
      return [
        { type: EventType.TOOL_CALL_START, timestamp: ms, toolCallId: callId, toolCallName: String(data.name ?? '') } as BaseEvent,
        { type: EventType.TOOL_CALL_ARGS, timestamp: ms, toolCallId: callId, delta: view.dataMemberText('arguments') ?? 'null' } as BaseEvent,
        { type: EventType.TOOL_CALL_END, timestamp: ms, toolCallId: callId } as BaseEvent,
      ];
    case 'tool_completed':
      return [{ type: EventType.TOOL_CALL_RESULT, timestamp: ms, toolCallId: callId, ...agUiToolResult(view), role: 'tool' } as BaseEvent];
    default:
      return [{ type: EventType.CUSTOM, timestamp: ms, name: type, value: data } as BaseEvent];
  }
}

/** The CUSTOM event name of a later `subscribed` (docs/protocol.md section 11). */
export const RESUBSCRIBED = 'horologium.subscribed';

/** A catch-up sent at the start instead of the events it stands for (ag-ui-snapshot.ts). */
export interface AgUiCatchUp {
  /** The MESSAGES_SNAPSHOT event. */
  event: BaseEvent;
  /** The `<epoch>:<seq>` of the last event it includes, when it includes any: its SSE id. */
  id?: string;
}

/** The AG-UI stream of one thread (a session) and run, opening with `catchUp` when given. */
export function agUiFormat(threadId: string, runId: string, catchUp?: AgUiCatchUp): SseFormat {
  const encode = (event: BaseEvent) => encoder.encodeSSE(event);
  let subscribed = false;
  return {
    name: 'ag-ui',
    opening: () =>
      encode({ type: EventType.RUN_STARTED, timestamp: Date.now(), threadId, runId } as BaseEvent) +
      (catchUp ? `${catchUp.id ? `id: ${catchUp.id}\n` : ''}${encode(catchUp.event)}` : ''),
    status: (frame, epoch, seq) => {
      const records = agUiEvents(frame).map(encode);
      records[records.length - 1] = `id: ${epoch}:${seq}\n${records[records.length - 1]}`;
      return records.join('');
    },
    message: (method, frame) => {
      const result = (JSON.parse(frame) as { result: { code?: string; message?: string; reason?: string } }).result;
      // The first `subscribed` is the run's start; a later one says the log was started again (or
      // events were missed for good) and the replay restarts: a CUSTOM event carries its result.
      if (method === 'subscribed') {
        if (!subscribed) return ((subscribed = true), '');
        return encode({ type: EventType.CUSTOM, timestamp: Date.now(), name: RESUBSCRIBED, value: result } as BaseEvent);
      }
      // A deleted session finishes the run; an error ends it as an AG-UI run error.
      if (method === 'unsubscribed') return encode({ type: EventType.RUN_FINISHED, timestamp: Date.now(), threadId, runId } as BaseEvent);
      if (method === 'error') return encode({ type: EventType.RUN_ERROR, timestamp: Date.now(), message: result.message ?? '', code: result.code ?? 'ERROR' } as BaseEvent);
      return '';
    },
  };
}
