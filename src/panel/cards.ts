/**
 * The cards of a session view, drawn from timeline items with text nodes only. A tool card is
 * `data-state="running"` until its `tool_completed`, then `ok` or `error` with the execution
 * time and the preview; a preview that is an object with a string `content` (a pass-through tool
 * such as `read_file`) is a file view with its path and numbered lines; other events are JSON.
 */
import type { StatusEvent } from '../client/index.js';
import { copyButton } from './copy.js';
import { el } from './dom.js';
import { clock, duration, readable } from './format.js';
import type { EventItem, Item, ToolItem } from './timeline.js';

/** Longer texts are folded to this many lines or characters, with a control to show them whole. */
const FOLD_LINES = 12;
const FOLD_CHARS = 800;

export function card(item: Item): HTMLElement {
  return item.kind === 'tool' ? toolCard(item) : eventCard(item);
}

function toolCard(item: ToolItem): HTMLElement {
  const done = item.completed?.data;
  const state = done === undefined ? 'running' : done.is_error === true ? 'error' : 'ok';
  const time = typeof done?.execution_time === 'number' ? duration(done.execution_time) : undefined;
  const label = state === 'running' ? 'running' : state === 'error' ? (time ? `error after ${time}` : 'error') : time ? `done in ${time}` : 'done';
  const timestamp = item.completed?.timestamp ?? item.startedAt;
  return el(
    'article',
    { class: 'card tool', 'data-call-id': item.callId, 'data-state': state, 'data-seq': item.seq },
    el(
      'header',
      {},
      el('span', { class: 'tool-name' }, item.name || '(unnamed tool)'),
      el('span', { class: 'state', 'data-state': state }, label),
      el('span', { class: 'spacer' }),
      el('code', { class: 'call-id', title: 'call_id' }, item.callId),
      copyButton('call id', () => item.callId),
      timestamp === undefined ? null : el('time', { class: 'at' }, clock(timestamp)),
    ),
    item.args ? el('code', { class: 'args' }, item.args) : null,
    done === undefined ? null : preview(done.result),
  );
}

function preview(result: unknown): HTMLElement {
  const isFile = typeof result === 'object' && result !== null && !Array.isArray(result) && typeof (result as { content?: unknown }).content === 'string';
  const body = isFile ? fileView(result as FileResult) : folded('preview', readable(result));
  return el('div', { class: 'result' }, body, copyButton('result', () => readable(result)));
}

interface FileResult {
  path?: unknown;
  range?: unknown;
  content: string;
}

/** A file as a pass-through tool returned it: the path, then its lines numbered from the range's start. */
function fileView(file: FileResult): HTMLElement {
  const first = Array.isArray(file.range) && Number.isInteger(file.range[0]) ? (file.range[0] as number) : 1;
  const range = Array.isArray(file.range) ? file.range.map(String).join('–') : undefined;
  const lines = file.content.replace(/\n$/, '').split('\n');
  const view = el('figure', { class: 'file' });
  const caption = el('figcaption', {}, el('span', { class: 'path' }, typeof file.path === 'string' ? file.path : '(no path)'), range ? el('span', { class: 'range' }, `lines ${range}`) : null);
  const gutter = el('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const code = el('pre', { class: 'code' });
  const body = el('div', { class: 'file-body' }, gutter, code);
  const draw = (count: number) => {
    gutter.textContent = lines.slice(0, count).map((_, i) => String(first + i)).join('\n');
    code.textContent = lines.slice(0, count).join('\n');
  };
  view.append(caption, body);
  foldControl(view, lines.length > FOLD_LINES, `${lines.length} lines`, (open) => draw(open ? lines.length : FOLD_LINES));
  return view;
}

function eventCard(item: EventItem): HTMLElement {
  const event: StatusEvent = item.event;
  return el(
    'article',
    { class: 'card event', 'data-type': event.type, 'data-seq': item.seq },
    el('header', {}, el('span', { class: 'event-type' }, event.type), el('span', { class: 'spacer' }), el('span', { class: 'seq' }, `#${event.seq}`), el('time', { class: 'at' }, clock(event.timestamp))),
    folded('data', JSON.stringify(event.data, null, 2)),
  );
}

/** A monospace text, folded when long. */
function folded(className: string, text: string): HTMLElement {
  const lines = text.split('\n');
  const long = lines.length > FOLD_LINES || text.length > FOLD_CHARS;
  const pre = el('pre', { class: className });
  const box = el('div', { class: 'fold' }, pre);
  const cut = () => {
    const head = lines.slice(0, FOLD_LINES).join('\n');
    return head.length > FOLD_CHARS ? [...head].slice(0, FOLD_CHARS).join('') : head;
  };
  foldControl(box, long, lines.length > 1 ? `${lines.length} lines` : `${[...text].length} characters`, (open) => {
    pre.textContent = open ? text : cut() + '…';
  });
  return box;
}

/** Calls `draw(false)` now and adds a toggle that draws the whole text, when `long`; else draws it whole. */
function foldControl(container: HTMLElement, long: boolean, size: string, draw: (open: boolean) => void): void {
  if (!long) {
    draw(true);
    return;
  }
  let open = false;
  const button = el('button', { type: 'button', class: 'expand', 'aria-expanded': 'false' }, `Show all (${size})`);
  button.addEventListener('click', () => {
    open = !open;
    draw(open);
    button.textContent = open ? 'Show less' : `Show all (${size})`;
    button.setAttribute('aria-expanded', String(open));
  });
  draw(false);
  container.append(button);
}
