/**
 * One status event as one line for a person at a terminal: time, seq, and what happened —
 * `▶ name args` for a tool call, `✓`/`✗ name time preview` for its result, the type and data JSON
 * for anything else. Control characters a producer sent are shown escaped, never sent to the
 * terminal (a result must not be able to move the cursor or retitle the window).
 */
import { isToolCompleted, isToolStarting, type StatusEvent } from '../client/index.js';
import type { Palette } from './colours.js';

const MAX_PREVIEW = 200;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

function printable(text: string): string {
  return text.replace(CONTROL, (c) => (c === '\n' ? '⏎' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

function shortened(text: string): string {
  return text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW)}…` : text;
}

function previewText(result: unknown): string {
  if (typeof result === 'string') return result;
  // A pass-through (read_file) result is an object: its path says the most in one line.
  const path = (result as { path?: unknown } | null)?.path;
  return typeof path === 'string' ? `file ${path}` : JSON.stringify(result);
}

export function eventLine(event: StatusEvent, paint: Palette): string {
  const time = new Date(event.timestamp * 1000).toISOString().slice(11, 23);
  const head = `${paint.dim(time)} ${paint.dim(`#${event.seq}`)}`;
  if (isToolStarting(event)) {
    const { data } = event;
    return `${head} ${paint.yellow('▶')} ${paint.bold(printable(String(data.name)))} ${printable(shortened(String(data.args ?? '')))}`;
  }
  if (isToolCompleted(event)) {
    const { data } = event;
    const mark = data.is_error === true ? paint.red('✗') : paint.green('✓');
    const seconds = typeof data.execution_time === 'number' ? ` ${paint.dim(`${data.execution_time}s`)}` : '';
    return `${head} ${mark} ${paint.bold(printable(String(data.name)))}${seconds} ${printable(shortened(previewText(data.result)))}`;
  }
  return `${head} ${paint.cyan(printable(event.type))} ${printable(shortened(JSON.stringify(event.data)))}`;
}
