/**
 * A session's events as the panel shows them: one item per tool call (keyed by `call_id`: its
 * `tool_starting` and `tool_completed` are one card) and one per other event, in the order of each
 * item's first seq. Events at or below the last seq applied are dropped, so replay then live, and
 * a resume after a reconnect, never make a card twice.
 */
import { isToolStarting, type StatusEvent, type ToolCompletedEvent } from '../client/index.js';

export interface ToolItem {
  kind: 'tool';
  key: string;
  seq: number;
  callId: string;
  name: string;
  /** The short args text of tool_starting (at most 120 characters). */
  args: string;
  startedAt?: number;
  completed?: ToolCompletedEvent;
}

export interface EventItem {
  kind: 'event';
  key: string;
  seq: number;
  event: StatusEvent;
}

export type Item = ToolItem | EventItem;

/** What applying a batch changed: items added at the end, and items whose card must be drawn again. */
export interface TimelineChange {
  added: number;
  updated: Set<Item>;
}

export class Timeline {
  readonly items: Item[] = [];
  private readonly byKey = new Map<string, Item>();
  lastSeq = 0;

  clear(): void {
    this.items.length = 0;
    this.byKey.clear();
    this.lastSeq = 0;
  }

  apply(events: StatusEvent[]): TimelineChange {
    const change: TimelineChange = { added: 0, updated: new Set() };
    const before = this.lastSeq;
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      const callId = event.data.call_id;
      const isTool = (event.type === 'tool_starting' || event.type === 'tool_completed') && typeof callId === 'string';
      if (!isTool) {
        this.add({ kind: 'event', key: `seq:${event.seq}`, seq: event.seq, event }, change);
        continue;
      }
      const key = `call:${callId}`;
      const existing = this.byKey.get(key) as ToolItem | undefined;
      const item: ToolItem = existing ?? { kind: 'tool', key, seq: event.seq, callId, name: '', args: '' };
      if (typeof event.data.name === 'string') item.name = event.data.name;
      if (isToolStarting(event)) {
        item.args = typeof event.data.args === 'string' ? event.data.args : '';
        item.startedAt = event.timestamp;
        item.completed = undefined;
      } else {
        item.completed = event as ToolCompletedEvent;
      }
      if (existing) {
        // A card that started in this same batch is drawn whole anyway.
        if (existing.seq <= before) change.updated.add(existing);
      } else {
        this.add(item, change);
      }
    }
    return change;
  }

  private add(item: Item, change: TimelineChange): void {
    this.byKey.set(item.key, item);
    this.items.push(item);
    change.added++;
  }
}
