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
