/**
 * The session view's filter: by tool name and by state (running, ok, error). While it filters,
 * only the calls that match are drawn (other events are not calls, so they are left out).
 */
import { callState, type CallState } from './cards.js';
import type { Item } from './timeline.js';

export interface CallFilter {
  /** A tool name, or '' for every tool. */
  tool: string;
  status: CallState | '';
}

export const NO_FILTER: CallFilter = { tool: '', status: '' };

export function isFiltering(filter: CallFilter): boolean {
  return filter.tool !== '' || filter.status !== '';
}

export function matches(item: Item, filter: CallFilter): boolean {
  if (!isFiltering(filter)) return true;
  if (item.kind !== 'tool') return false;
  if (filter.tool !== '' && item.name !== filter.tool) return false;
  return filter.status === '' || callState(item) === filter.status;
}
