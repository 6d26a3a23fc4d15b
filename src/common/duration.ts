/**
 * Durations as every setting and flag writes them (docs/protocol.md section 9). In a file of its own,
 * with no dependency, so the CLI's commands can read a flag without loading the configuration's
 * zod schema.
 */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration: `0`, or a non-negative number followed by ms, s, m, h or d; in ms (undefined when it is none). */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$/.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return Number.isFinite(ms) && ms <= Number.MAX_SAFE_INTEGER ? Math.round(ms) : undefined;
}
