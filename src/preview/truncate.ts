/**
 * ActiveSupport's `String#truncate(limit)` over Unicode code points (docs/protocol.md section 2): a text
 * of at most `limit` code points is returned unchanged; a longer one becomes its first `limit - 3`
 * code points followed by `...`, exactly `limit` code points in all. A surrogate pair is never split.
 * Costs O(limit), whatever the length of `text`.
 */
export const OMISSION = '...';

export function truncate(text: string, limit: number): string {
  if (limit < OMISSION.length + 1) throw new RangeError(`truncate limit must be at least 4, got ${limit}`);
  // UTF-16 length bounds the code point count from above: short texts need no walk.
  if (text.length <= limit) return text;
  const keep = limit - OMISSION.length;
  let units = 0;
  let points = 0;
  let cut = -1;
  while (units < text.length) {
    if (points === keep) cut = units;
    if (points === limit) return text.slice(0, cut) + OMISSION;
    const c = text.charCodeAt(units);
    units += c >= 0xd800 && c <= 0xdbff && units + 1 < text.length ? 2 : 1;
    points++;
  }
  return text;
}
