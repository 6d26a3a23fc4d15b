/**
 * The sessions list's cursor (docs/protocol.md section 9): opaque to clients, it is the position of
 * the last session of a page in the list's order (last activity descending, then id ascending),
 * so that the next page starts right after it even while sessions change.
 */
import type { SessionSummary } from './types.js';

export interface ListPosition {
  lastEventAt: number;
  session: string;
}

export function encodeCursor(p: ListPosition): string {
  return Buffer.from(`${p.lastEventAt}:${p.session}`).toString('base64url');
}

/** undefined for a cursor this server did not make. */
export function decodeCursor(cursor: string): ListPosition | undefined {
  const text = Buffer.from(cursor, 'base64url').toString();
  const m = /^([0-9]{1,16}):(.+)$/.exec(text);
  return m ? { lastEventAt: Number(m[1]), session: m[2] as string } : undefined;
}

/** True when `s` comes after `p` in the list's order. */
export function isAfter(s: ListPosition, p: ListPosition): boolean {
  return s.lastEventAt < p.lastEventAt || (s.lastEventAt === p.lastEventAt && s.session > p.session);
}

/** The list's order. */
export function byActivity(a: SessionSummary, b: SessionSummary): number {
  return b.lastEventAt - a.lastEventAt || (a.session < b.session ? -1 : a.session > b.session ? 1 : 0);
}
