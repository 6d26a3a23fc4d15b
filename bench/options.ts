/** Command-line options of the benchmarks: `--name value`, numbers only. */
export function numberOption(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

/** A comma-separated list of numbers: `--name 1,4,50`. */
export function listOption(name: string, fallback: number[]): number[] {
  const args = process.argv.slice(2);
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? String(args[at + 1]).split(',').map(Number) : fallback;
}

/** The middle value (the upper one of an even count), as every benchmark reports its runs. */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
}
