/**
 * A JSON value as a collapsible tree (docs/panel.md): objects and arrays are <details> elements whose
 * summary says how many members they hold, open to DEPTH_OPEN levels; scalars are typed spans with
 * their JSON text. Every key and value is a text node, never markup. A container shows at most
 * MEMBERS_SHOWN members, then says how many more there are (the copy button has them all).
 */
import { el } from './dom.js';

const DEPTH_OPEN = 2;
const MEMBERS_SHOWN = 200;

export function jsonTree(value: unknown): HTMLElement {
  return el('div', { class: 'json-tree' }, node(value, 0));
}

function node(value: unknown, depth: number): HTMLElement {
  if (value === null) return el('span', { class: 'json-null' }, 'null');
  if (Array.isArray(value)) return container(value.map((v, i) => [String(i), v] as const), depth, '[', ']', value.length === 1 ? '1 item' : `${value.length} items`, false);
  if (typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>);
    return container(members, depth, '{', '}', members.length === 1 ? '1 key' : `${members.length} keys`, true);
  }
  if (typeof value === 'string') return el('span', { class: 'json-string' }, JSON.stringify(value));
  return el('span', { class: `json-${typeof value}` }, String(value));
}

function container(members: ReadonlyArray<readonly [string, unknown]>, depth: number, open: string, close: string, size: string, keyed: boolean): HTMLElement {
  if (members.length === 0) return el('span', { class: 'json-empty' }, open + close);
  const details = el('details', { class: 'json-container', open: depth < DEPTH_OPEN }, el('summary', {}, `${open}…${close} ${size}`));
  for (const [key, value] of members.slice(0, MEMBERS_SHOWN)) {
    details.append(el('div', { class: 'json-member' }, keyed ? el('span', { class: 'json-key' }, JSON.stringify(key)) : null, keyed ? ': ' : null, node(value, depth + 1)));
  }
  if (members.length > MEMBERS_SHOWN) details.append(el('div', { class: 'json-more' }, `… ${members.length - MEMBERS_SHOWN} more`));
  return details;
}
