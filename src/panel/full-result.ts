/**
 * "Full result": the server cuts a text preview to its limit and ends it with "..." (docs/protocol.md
 * section 2), so a card whose preview ends so offers the complete result, loaded on click from
 * `GET …/tool-results/{call_id}` (scope consume). Once loaded it says how much the preview showed
 * ("preview: 4,000 of 20,480 characters") and shows the result as text (a `content` string, as the
 * preview does) or as a collapsible JSON tree, never as markup; a token without the consume scope
 * is told why it cannot.
 */
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

/** What the preview was cut from: an object's `content` (unless null or false), else the result's JSON text. */
function previewSource(raw: string, parsed: unknown): string {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'content' in parsed) {
    const content = (parsed as { content: unknown }).content;
    if (content !== null && content !== false) return typeof content === 'string' ? content : JSON.stringify(content);
  }
  return typeof parsed === 'string' ? parsed : raw;
}

export function fullResultControl(session: string, callId: string, preview: string): HTMLElement {
  const box = el('div', { class: 'full-result' });
  const button = el('button', { type: 'button', class: 'load-full' }, 'Full result');
  box.append(button);
  button.addEventListener('click', () => {
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
        const shown = characters(preview);
        const whole = characters(source);
        const line = whole > shown ? `preview: ${count(shown)} of ${count(whole)} characters` : `the preview is the whole result (${count(whole)} characters)`;
        const body = source !== raw || typeof parsed !== 'object' || parsed === null ? el('pre', { class: 'full' }, source) : jsonTree(parsed);
        replaceChildren(box, el('p', { class: 'full-size' }, line), body, copyButton('full result', () => raw));
      },
      (error: unknown) => {
        const status = error instanceof ApiError ? error.status : 0;
        const why =
          status === 403
            ? 'This token may not read full results: it needs the consume scope.'
            : status === 404
              ? 'The full result is no longer stored (retention removed it).'
              : `The full result could not be loaded: ${(error as Error).message}`;
        replaceChildren(box, el('p', { class: 'full-size refused', role: 'status' }, why));
      },
    );
  });
  return box;
}
