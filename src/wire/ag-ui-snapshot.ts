/**
 * The compact catch-up of an AG-UI stream (docs/protocol.md section 11, "Snapshot"): the messages an
 * AG-UI client would have built from the session's events so far, sent as one MESSAGES_SNAPSHOT
 * instead of the events themselves. The messages are built by the rules @ag-ui/client applies to
 * the events this server sends (wire/ag-ui.ts), so a client that starts from the snapshot ends with
 * the same `messages` as one that read every event:
 *
 * - tool_starting (TOOL_CALL_START without a parent, ARGS, END) → an assistant message whose id is
 *   the call id, holding one tool call whose arguments are the JSON text of `arguments`;
 * - tool_completed (TOOL_CALL_RESULT) → a tool message (id: the event's uuid) placed after the
 *   assistant message of its call and the tool messages already behind it, or at the end when the
 *   call has none (a result posted without a tool-calls);
 * - any other event (CUSTOM) changes no message.
 *
 * Calls still running are assistant messages without a tool message: their results come live.
 */
import { EventType, type BaseEvent, type Message } from '@ag-ui/core';
import { agUiToolResult } from './ag-ui.js';
import { statusView } from './status-view.js';

export class AgUiSnapshot {
  private readonly messages: Message[] = [];

  /** Applies one status frame, in log order. */
  apply(frame: string): void {
    const view = statusView(frame);
    const callId = String(view.data.call_id ?? '');
    if (view.type === 'tool_starting') {
      if (this.messages.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === callId))) return;
      this.messages.push({
        id: callId,
        role: 'assistant',
        toolCalls: [{ id: callId, type: 'function', function: { name: String(view.data.name ?? ''), arguments: view.dataMemberText('arguments') ?? 'null' } }],
      });
    } else if (view.type === 'tool_completed') {
      const { messageId, content } = agUiToolResult(view);
      const result: Message = { id: messageId, role: 'tool', toolCallId: callId, content };
      const at = this.messages.findIndex((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === callId));
      if (at === -1) {
        this.messages.push(result);
        return;
      }
      let end = at + 1;
      while (end < this.messages.length && this.messages[end]?.role === 'tool') end++;
      this.messages.splice(end, 0, result);
    }
  }

  /** The MESSAGES_SNAPSHOT event of everything applied so far. */
  event(): BaseEvent {
    return { type: EventType.MESSAGES_SNAPSHOT, timestamp: Date.now(), messages: this.messages } as BaseEvent;
  }
}
