/** Copy buttons: the Clipboard API where the page may use it, a hidden textarea where it may not (plain http). */
import { el } from './dom.js';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = el('textarea', { readonly: true, class: 'offscreen' });
    area.value = text;
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/** A small button that copies `text()` and says so for a moment. */
export function copyButton(label: string, text: () => string): HTMLButtonElement {
  const button = el('button', { type: 'button', class: 'copy', title: `Copy ${label}`, 'aria-label': `Copy ${label}` }, 'Copy');
  button.addEventListener('click', (event) => {
    event.preventDefault();
    event.stopPropagation();
    void copyText(text()).then((ok) => {
      button.textContent = ok ? 'Copied' : 'Copy failed';
      button.dataset.copied = String(ok);
      setTimeout(() => {
        button.textContent = 'Copy';
        delete button.dataset.copied;
      }, 1200);
    });
  });
  return button;
}
