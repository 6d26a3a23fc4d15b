/** How times, durations and values read on the panel. */

/** "12 s ago", "5 min ago", "3 h ago", else the date. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

/** An execution time in seconds as "420 ms" or "1.23 s". */
export function duration(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(2)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** An event's timestamp (seconds since the epoch) as the local wall-clock time, to the millisecond. */
export function clock(timestamp: number): string {
  const d = new Date(timestamp * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A timestamp (seconds) as the local date and time to the second: "2026-12-07 05:10:02". */
export function dateTime(timestamp: number): string {
  const d = new Date(timestamp * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A value as people read JSON: strings as they are, anything else indented. */
export function readable(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? String(value);
}
