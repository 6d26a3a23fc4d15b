/**
 * A session's totals as the header shows them, from the calls and events drawn so far: calls,
 * errors, running, total and longest execution time, and the first and last event's time with
 * the date (a session may run for days).
 */
import { callState } from './cards.js';
import { dateTime, duration } from './format.js';
import type { Item } from './timeline.js';

export interface Totals {
  calls: number;
  errors: number;
  running: number;
  /** Sum of the completed calls' execution times (seconds); calls without one are not counted. */
  totalTime: number;
  longest: { seconds: number; name: string } | undefined;
  /** Timestamps (seconds) of the first and last event seen. */
  first: number | undefined;
  last: number | undefined;
}

export function totalsOf(items: readonly Item[]): Totals {
  const totals: Totals = { calls: 0, errors: 0, running: 0, totalTime: 0, longest: undefined, first: undefined, last: undefined };
  const seen = (timestamp: number | undefined) => {
    if (timestamp === undefined) return;
    if (totals.first === undefined || timestamp < totals.first) totals.first = timestamp;
    if (totals.last === undefined || timestamp > totals.last) totals.last = timestamp;
  };
  for (const item of items) {
    if (item.kind === 'event') {
      seen(item.event.timestamp);
      continue;
    }
    totals.calls++;
    seen(item.startedAt);
    seen(item.completed?.timestamp);
    const state = callState(item);
    if (state === 'running') totals.running++;
    if (state === 'error') totals.errors++;
    const seconds = item.completed?.data.execution_time;
    if (typeof seconds !== 'number') continue;
    totals.totalTime += seconds;
    if (!totals.longest || seconds > totals.longest.seconds) totals.longest = { seconds, name: item.name };
  }
  return totals;
}

/** The header's line: "3 calls · 1 error · 1 running · 1.50 s in tools · longest 1.20 s (grep) · 2026-12-07 05:10:02 → 05:12:45". */
export function totalsText(t: Totals): string {
  const parts = [`${t.calls} ${t.calls === 1 ? 'call' : 'calls'}`, `${t.errors} ${t.errors === 1 ? 'error' : 'errors'}`];
  if (t.running > 0) parts.push(`${t.running} running`);
  if (t.calls - t.running > 0) parts.push(`${duration(t.totalTime)} in tools`);
  if (t.longest) parts.push(`longest ${duration(t.longest.seconds)} (${t.longest.name})`);
  if (t.first !== undefined && t.last !== undefined) {
    const [firstDate, firstTime] = dateTime(t.first).split(' ') as [string, string];
    const [lastDate, lastTime] = dateTime(t.last).split(' ') as [string, string];
    parts.push(`${firstDate} ${firstTime} → ${lastDate === firstDate ? lastTime : `${lastDate} ${lastTime}`}`);
  }
  return parts.join(' · ');
}
