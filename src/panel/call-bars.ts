/**
 * The compact timeline of a session's calls: one bar per call from its start to its end (a running
 * call reaches to now), on a shared time axis from the first call's start to the last end. Calls
 * that do not overlap share a lane, so a sequential agent is one line and parallel calls stack (at
 * most MAX_LANES lanes; more overlap draws over the last). A bar is a button: it names the call
 * and its duration, and picking it shows its card.
 */
import { callState } from './cards.js';
import { el, replaceChildren } from './dom.js';
import { duration } from './format.js';
import type { ToolItem } from './timeline.js';

/** The newest calls drawn at most (the view's cards page back further). */
const MAX_BARS = 300;
const MAX_LANES = 6;
const LANE_PX = 9;

interface Span {
  item: ToolItem;
  start: number;
  end: number;
}

/** When a call ran: tool_starting to tool_completed, else execution_time before the result, else a point. */
function spanOf(item: ToolItem, now: number): Span | undefined {
  const done = item.completed;
  const end = done ? done.timestamp : now;
  const seconds = done?.data.execution_time;
  const start = item.startedAt ?? (typeof seconds === 'number' ? end - seconds : end);
  return item.startedAt === undefined && !done ? undefined : { item, start, end: Math.max(start, end) };
}

export class CallBars {
  constructor(
    private readonly container: HTMLElement,
    private readonly pick: (item: ToolItem) => void,
  ) {}

  draw(calls: readonly ToolItem[], now = Date.now() / 1000): void {
    const spans = calls
      .slice(-MAX_BARS)
      .map((item) => spanOf(item, now))
      .filter((s): s is Span => s !== undefined);
    this.container.hidden = spans.length === 0;
    if (spans.length === 0) return replaceChildren(this.container);
    const from = Math.min(...spans.map((s) => s.start));
    const to = Math.max(...spans.map((s) => s.end));
    const width = Math.max(to - from, 0.001);
    const laneEnds: number[] = [];
    const bars = spans
      .sort((a, b) => a.start - b.start)
      .map(({ item, start, end }) => {
        let lane = laneEnds.findIndex((free) => free <= start);
        if (lane === -1) lane = laneEnds.length < MAX_LANES ? laneEnds.length : MAX_LANES - 1;
        laneEnds[lane] = end;
        const state = callState(item);
        const took = state === 'running' ? 'running' : duration(end - start);
        const bar = el('button', {
          type: 'button',
          class: 'bar',
          'data-call-id': item.callId,
          'data-state': state,
          title: `${item.name} · ${took}`,
          'aria-label': `${item.name}, ${took}: show its card`,
        });
        // Through the CSSOM: the panel's CSP (style-src 'self') refuses style attributes.
        bar.style.left = `${(((start - from) / width) * 100).toFixed(3)}%`;
        bar.style.width = `max(3px, ${(((end - start) / width) * 100).toFixed(3)}%)`;
        bar.style.top = `${lane * LANE_PX}px`;
        bar.addEventListener('click', () => this.pick(item));
        return bar;
      });
    this.container.style.height = `${laneEnds.length * LANE_PX}px`;
    replaceChildren(this.container, ...bars);
  }
}
