/**
 * ANSI colours for a terminal: on when stdout is a TTY, off with NO_COLOR (https://no-color.org)
 * or when piped, forced on with FORCE_COLOR.
 */
export type Paint = (text: string) => string;

export interface Palette {
  dim: Paint;
  bold: Paint;
  green: Paint;
  red: Paint;
  yellow: Paint;
  cyan: Paint;
}

function painter(on: boolean, open: number, close: number): Paint {
  return on ? (text) => `\u001b[${open}m${text}\u001b[${close}m` : (text) => text;
}

export function palette(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Palette {
  const on = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' ? true : env.NO_COLOR === undefined && stream.isTTY === true;
  return {
    dim: painter(on, 2, 22),
    bold: painter(on, 1, 22),
    green: painter(on, 32, 39),
    red: painter(on, 31, 39),
    yellow: painter(on, 33, 39),
    cyan: painter(on, 36, 39),
  };
}
