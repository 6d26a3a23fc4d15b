/**
 * The cards of a session view, drawn from timeline items with text nodes only. A tool card is
 * `data-state="running"` until its `tool_completed`, then `ok` or `error` with the execution
 * time and the preview. As the seed's Swift file mirror draws them: a preview that is an object
 * with a string `content` (a pass-through tool such as `read_file`) is a file view headed by the
 * file's name (its path from the result, or else from the call's `arguments.path`; the whole path
 * on hover), and a `read_file` result with an `error` is shown as that error; a `patch_file`
 * result (`ok`, `error`, diff statistics) is the minimal done-card `✓ ok` with its statistics.
 * Other object previews and every event's data are a collapsible JSON tree.
 */
import type { StatusEvent, ToolCompletedData } from '../client/index.js';
import { copyButton } from './copy.js';
import { el } from './dom.js';
import { clock, duration, readable } from './format.js';
import { cutPreview, fullResultControl } from './full-result.js';
import { mcpContent, mcpView } from './mcp-result.js';
import { jsonTree } from './json-tree.js';
import type { EventItem, Item, ToolItem } from './timeline.js';

/** Longer texts are folded to this many lines or characters, with a control to show them whole. */
const FOLD_LINES = 12;
const FOLD_CHARS = 800;

/** A card for `item` of `session` (a tool card's "Full result" loads from it). */
export function card(item: Item, session: string): HTMLElement {
  return item.kind === 'tool' ? toolCard(item, session) : eventCard(item);
}

/** A call as its card shows it: running until its result, then an error (is_error, or an error the result reports itself) or ok. */
export type CallState = 'running' | 'ok' | 'error';

export function callState(item: ToolItem): CallState {
  const done = item.completed?.data;
  if (done === undefined) return 'running';
  return done.is_error === true || shownAs(item.name, done.result).error !== undefined ? 'error' : 'ok';
}

function toolCard(item: ToolItem, session: string): HTMLElement {
  const done = item.completed?.data;
  const shown = done === undefined ? undefined : shownAs(item.name, done.result);
  const state = callState(item);
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
    ...(done === undefined || shown === undefined ? [] : resultViews(session, item.callId, done, shown)),
  );
}

/** The preview, and for a cut one the line that says so and the control that swaps in the full result. */
function resultViews(session: string, callId: string, done: ToolCompletedData, shown: Shown): HTMLElement[] {
  const view = preview(done, shown);
  const cut = shown.kind === 'plain' ? cutPreview(done) : undefined;
  return cut === undefined ? [view] : [view, fullResultControl(session, callId, cut, view)];
}

/**
 * How a completed call's preview is drawn, decided once per card: a patch card, a file view, or
 * plain (text or a JSON tree); `error` is the error the result reports itself, beside `is_error`.
 */
type Shown = { kind: 'patch'; patch: PatchResult; error?: string } | { kind: 'file'; file: FileResult; error?: string } | { kind: 'plain'; error?: undefined };

function shownAs(name: string, result: unknown): Shown {
  const patch = name === 'patch_file' ? patchResult(result) : undefined;
  if (patch) return patch.ok === true ? { kind: 'patch', patch } : { kind: 'patch', patch, error: patchError(patch) };
  const file = fileResult(name, result);
  if (!file) return { kind: 'plain' };
  return typeof file.error === 'string' && file.error !== '' ? { kind: 'file', file, error: file.error } : { kind: 'file', file };
}

function preview(done: ToolCompletedData, shown: Shown): HTMLElement {
  const result = done.result;
  const body =
    shown.kind === 'patch'
      ? patchView(shown.patch)
      : shown.kind === 'file'
        ? fileView(shown.file, argumentsPath(done.arguments))
        : typeof result === 'string'
          ? plainText(result)
          : jsonTree(result);
  return el('div', { class: 'result' }, body, copyButton('result', () => readable(result)));
}

interface FileResult {
  path?: unknown;
  range?: unknown;
  content?: string;
  error?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A file view's result: an object with a string `content`, or a `read_file` object with a string `error`. */
function fileResult(name: string, result: unknown): FileResult | undefined {
  if (!isObject(result)) return undefined;
  if (typeof result.content === 'string') return result as FileResult;
  return name === 'read_file' && typeof result.error === 'string' ? (result as FileResult) : undefined;
}

/** The path the call was given, as the Swift mirror recovers it (`args?.path ?? ""`). */
function argumentsPath(args: unknown): string | undefined {
  return isObject(args) && typeof args.path === 'string' ? args.path : undefined;
}

interface PatchResult {
  ok?: unknown;
  error?: unknown;
  [statistic: string]: unknown;
}

/** A patch_file result: the object itself when it passed through, or the JSON text of one (the default preview of an object). */
function patchResult(result: unknown): PatchResult | undefined {
  let value = result;
  if (typeof result === 'string') {
    try {
      value = JSON.parse(result);
    } catch {
      return undefined;
    }
  }
  return isObject(value) && typeof value.ok === 'boolean' ? value : undefined;
}

/** Why a patch was not applied: its `error`, or "not applied" when it gives none. */
function patchError(patch: PatchResult): string {
  return typeof patch.error === 'string' && patch.error !== '' ? patch.error : 'not applied';
}

/** The minimal done-card: `✓ ok` (or the error) and the diff statistics, the numbers of the result. */
function patchView(patch: PatchResult): HTMLElement {
  const stats = Object.entries(patch).filter(([, v]) => typeof v === 'number');
  const outcome = patch.ok === true ? el('span', { class: 'patch-ok' }, '✓ ok') : el('span', { class: 'patch-error', role: 'alert' }, `✗ ${patchError(patch)}`);
  return el(
    'div',
    { class: 'patch' },
    outcome,
    ...stats.map(([k, v]) => el('span', { class: 'patch-stat', 'data-stat': k }, `${k} ${String(v)}`)),
  );
}

/**
 * A file as a pass-through tool returned it: its name (the whole path on hover), then its lines
 * numbered from the range's start, or its error.
 */
function fileView(file: FileResult, calledWith: string | undefined): HTMLElement {
  const path = typeof file.path === 'string' ? file.path : (calledWith ?? '');
  const fileName = path.split('/').filter(Boolean).pop() ?? '';
  const first = Array.isArray(file.range) && Number.isInteger(file.range[0]) ? (file.range[0] as number) : 1;
  const range = Array.isArray(file.range) ? file.range.map(String).join('–') : undefined;
  const view = el('figure', { class: 'file' });
  const caption = el(
    'figcaption',
    {},
    el('span', { class: 'path', title: path }, fileName || '(no path)'),
    range ? el('span', { class: 'range' }, `lines ${range}`) : null,
  );
  if (typeof file.content !== 'string') {
    view.append(caption, el('p', { class: 'file-error', role: 'alert' }, file.error ?? ''));
    return view;
  }
  const lines = file.content.replace(/\n$/, '').split('\n');
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
    jsonTree(event.data),
  );
}

/** A text preview: an MCP result's items when it is one, else the text, folded when long. */
function plainText(text: string): HTMLElement {
  const items = mcpContent(text);
  return items ? mcpView(items) : folded('preview', text);
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
