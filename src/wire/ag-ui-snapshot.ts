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

/**
 * The messages as blocks: a call's assistant message and the tool messages right behind it. The
 * client puts a result after its call's assistant message and the tool messages already behind it,
 * which is the end of that call's block; a result whose call is unknown goes at the very end, which
 * is the end of the last block. So each message is placed in O(1), and the blocks, read in order,
 * are the client's list.
 */
interface Block {
  assistant?: Message;
  tools: Message[];
}

export class AgUiSnapshot {
  private readonly blocks: Block[] = [];
  /** The block of each call id's first assistant message (the one the client finds). */
  private readonly byCall = new Map<string, Block>();

  /** Applies one status frame, in log order. */
  apply(frame: string): void {
    const view = statusView(frame);
    const callId = String(view.data.call_id ?? '');
    if (view.type === 'tool_starting') {
      if (this.byCall.has(callId)) return;
      const block: Block = {
        assistant: {
          id: callId,
          role: 'assistant',
          toolCalls: [{ id: callId, type: 'function', function: { name: String(view.data.name ?? ''), arguments: view.dataMemberText('arguments') ?? 'null' } }],
        },
        tools: [],
      };
      this.blocks.push(block);
      this.byCall.set(callId, block);
    } else if (view.type === 'tool_completed') {
      const { messageId, content } = agUiToolResult(view);
      const result: Message = { id: messageId, role: 'tool', toolCallId: callId, content };
      let block = this.byCall.get(callId) ?? this.blocks.at(-1);
      if (!block) this.blocks.push((block = { tools: [] }));
      block.tools.push(result);
    }
  }

  /** The MESSAGES_SNAPSHOT event of everything applied so far. */
  event(): BaseEvent {
    const messages: Message[] = [];
    for (const block of this.blocks) {
      if (block.assistant) messages.push(block.assistant);
      for (const tool of block.tools) messages.push(tool);
    }
    return { type: EventType.MESSAGES_SNAPSHOT, timestamp: Date.now(), messages } as BaseEvent;
  }
}
