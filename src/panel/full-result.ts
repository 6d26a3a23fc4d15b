/**
 * "Full result": a cut preview says so before any click ("preview: 4,000 characters of 20,480
 * bytes (20 KB)", from v1.2's `truncated` and `result_bytes`; for an event stored before v1.2 the
 * "..." the server's truncation ends with is the only hint), and offers the complete result, loaded
 * on click from `GET …/tool-results/{call_id}` (scope consume). The full result takes the
 * preview's place (the preview is hidden, so no line shows twice) and "Show preview" puts the
 * preview back. Once loaded it says how much the preview showed and shows the result as text (a
 * `content` string, as the preview does) or as a collapsible JSON tree, never as markup; a token
 * without the consume scope is told why it cannot.
 */
import type { ToolCompletedData } from '../client/index.js';
import { ApiError, toolResultText } from './api.js';
import { copyButton } from './copy.js';
import { el, replaceChildren } from './dom.js';
import { jsonTree } from './json-tree.js';

/** A text preview that may have been cut: the server's truncation always ends in "...". */
export function mayBeCut(preview: unknown): preview is string {
  return typeof preview === 'string' && preview.endsWith('...');
}

const characters = (text: string) => [...text].length;
const count = (n: number) => n.toLocaleString('en-US');
const kilobytes = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`);

/** A cut preview: its text, and the whole result's size when the event says it (v1.2). */
export interface CutPreview {
  text: string;
  resultBytes?: number;
}

/** The preview of `done` when it was cut (v1.2's `truncated`; before v1.2, a text ending in "..."), else undefined. */
export function cutPreview(done: ToolCompletedData): CutPreview | undefined {
  if (typeof done.result !== 'string') return undefined;
  if (typeof done.truncated === 'boolean') {
    if (!done.truncated) return undefined;
    return { text: done.result, ...(typeof done.result_bytes === 'number' ? { resultBytes: done.result_bytes } : {}) };
  }
  return mayBeCut(done.result) ? { text: done.result } : undefined;
}

/** What the card says of a cut preview before any click. */
export function cutLine(cut: CutPreview): string {
  const shown = count(characters(cut.text));
  return cut.resultBytes === undefined
    ? `preview: ${shown} characters, possibly cut`
    : `preview: ${shown} characters of ${count(cut.resultBytes)} bytes (${kilobytes(cut.resultBytes)})`;
}

/** What the preview was cut from: an object's `content` (unless null or false), else the result's JSON text. */
function previewSource(raw: string, parsed: unknown): string {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'content' in parsed) {
    const content = (parsed as { content: unknown }).content;
    if (content !== null && content !== false) return typeof content === 'string' ? content : JSON.stringify(content);
  }
  return typeof parsed === 'string' ? parsed : raw;
}

export function fullResultControl(session: string, callId: string, cut: CutPreview, preview: HTMLElement): HTMLElement {
  const box = el('div', { class: 'full-result' });
  const line = el('p', { class: 'cut-line' }, cutLine(cut));
  const button = el('button', { type: 'button', class: 'load-full', 'aria-expanded': 'false' }, 'Full result');
  const full = el('div', { class: 'full-body' });
  full.hidden = true;
  box.append(line, button, full);
  /** Shows the full result in the preview's place, or the preview again. */
  const showFull = (on: boolean) => {
    preview.hidden = on;
    full.hidden = !on;
    button.textContent = on ? 'Show preview' : 'Full result';
    button.setAttribute('aria-expanded', String(on));
  };
  let loaded = false;
  button.addEventListener('click', () => {
    if (loaded) {
      showFull(full.hidden);
      return;
    }
    button.disabled = true;
    button.textContent = 'Loading…';
    toolResultText(session, callId).then(
      (raw) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch {
          parsed = raw;
        }
        const source = previewSource(raw, parsed);
        const shown = characters(cut.text);
        const whole = characters(source);
        line.textContent = whole > shown ? `preview: ${count(shown)} of ${count(whole)} characters` : `the preview is the whole result (${count(whole)} characters)`;
        const body = source !== raw || typeof parsed !== 'object' || parsed === null ? el('pre', { class: 'full' }, source) : jsonTree(parsed);
        replaceChildren(full, body, copyButton('full result', () => raw));
        loaded = true;
        button.disabled = false;
        showFull(true);
      },
      (error: unknown) => {
        const status = error instanceof ApiError ? error.status : 0;
        const why =
          status === 403
            ? 'This token may not read full results: it needs the consume scope.'
            : status === 404
              ? 'The full result is no longer stored (retention removed it).'
              : `The full result could not be loaded: ${(error as Error).message}`;
        replaceChildren(box, line, el('p', { class: 'full-size refused', role: 'status' }, why));
      },
    );
  });
  return box;
}
