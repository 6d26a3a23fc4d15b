/**
 * JSON string literals built from UTF-8 bytes, never from a JS string: the queue reply sends a
 * stored result twice (as JSON and as `message.content`, its text as a string), and turning a
 * multi-megabyte result into a JS string and back into bytes costs far more than one pass over
 * its bytes.
 *
 * The output is byte for byte what `JSON.stringify(text)` encodes to in UTF-8 for the text the bytes
 * hold, given well-formed UTF-8 (stored results are: the request decoder replaced every invalid
 * sequence): `"` and `\` get a backslash; backspace, form feed, newline, carriage return and tab
 * their short escapes; other characters below U+0020 `\u00xx` in lower-case hex; everything else,
 * multi-byte characters included, passes through unchanged.
 */

/** Bytes each input byte adds when escaped: 0 (as it is), 1 (`\"`, `\n`, …) or 5 (`\u00xx`). */
const EXTRA = new Uint8Array(256);
/** The letter of a two-byte escape (`n` for newline), 0 where there is none. */
const SHORT = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) EXTRA[b] = 5;
for (const [byte, letter] of [
  [0x22, '"'],
  [0x5c, '\\'],
  [0x08, 'b'],
  [0x0c, 'f'],
  [0x0a, 'n'],
  [0x0d, 'r'],
  [0x09, 't'],
] as const) {
  EXTRA[byte] = 1;
  SHORT[byte] = letter.charCodeAt(0);
}
const HEX = Buffer.from('0123456789abcdef');

/** The length in bytes of the JSON string literal of `text` (quotes included). */
export function jsonStringLength(text: Uint8Array): number {
  let extra = 0;
  for (let i = 0; i < text.length; i++) extra += EXTRA[text[i] as number] as number;
  return text.length + extra + 2;
}

/**
 * Writes the JSON string literal of `text` into `out` at `at` and returns the offset after it.
 * `out` must have room for `jsonStringLength(text)` bytes from `at`.
 */
export function writeJsonString(text: Uint8Array, out: Uint8Array, at: number): number {
  let o = at;
  out[o++] = 0x22;
  // One pass, byte by byte: in file text an escape comes every few bytes, so copying the runs
  // between them as subarrays was no faster than this (measured on an 8 MiB result).
  for (let i = 0; i < text.length; i++) {
    const b = text[i] as number;
    if (EXTRA[b] === 0) {
      out[o++] = b;
      continue;
    }
    out[o++] = 0x5c;
    const letter = SHORT[b] as number;
    if (letter !== 0) {
      out[o++] = letter;
    } else {
      out[o++] = 0x75; // u
      out[o++] = 0x30;
      out[o++] = 0x30;
      out[o++] = HEX[b >> 4] as number;
      out[o++] = HEX[b & 15] as number;
    }
  }
  out[o++] = 0x22;
  return o;
}
