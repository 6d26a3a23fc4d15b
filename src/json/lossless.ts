/**
 * A lossless JSON reader for the model route (docs/protocol.md sections 2 to 4).
 *
 * `JSON.parse` followed by `JSON.stringify` loses integers beyond 2^53, the spelling of numbers
 * (`1.50`, `1e3`) and the order of integer-like keys, so this reader works on the raw request text.
 * In one pass it produces:
 *
 * - `text`: the *canonical JSON text* of the document: insignificant whitespace removed, keys in the
 *   order sent (duplicates kept), numbers exactly as sent, strings decoded and re-escaped as
 *   `JSON.stringify` escapes them, lone surrogates replaced by U+FFFD (safe encoding, section 3);
 * - a tree whose every node knows the span of its own canonical text, so the JSON text of any value
 *   is a `slice` and never a re-serialisation.
 *
 * The reader is iterative (an explicit stack), so nesting is bounded by `maxDepth`, not by the
 * JavaScript call stack. Minified input with no escapes is copied once, in one slice.
 */

export type JsonNode = JsonObject | JsonArray | JsonString | JsonNumber | JsonLiteral;

interface Span {
  /** Offset of the node's first character in the canonical text. */
  start: number;
  /** Offset just past the node's last character in the canonical text. */
  end: number;
}

export interface JsonObject extends Span {
  kind: 'object';
  /** Decoded, well-formed keys in the order sent; duplicates are kept. */
  keys: string[];
  values: JsonNode[];
}

export interface JsonArray extends Span {
  kind: 'array';
  items: JsonNode[];
}

export interface JsonString extends Span {
  kind: 'string';
  /** The decoded, well-formed value. */
  value: string;
}

export interface JsonNumber extends Span {
  kind: 'number';
}

export interface JsonLiteral extends Span {
  kind: 'true' | 'false' | 'null';
}

export interface JsonDocument {
  /** The canonical JSON text of the whole document. */
  text: string;
  root: JsonNode;
  /** The UTF-16 length of the longest string value (keys excluded); lets callers skip walks. */
  longestString: number;
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

export class JsonNestingError extends Error {
  constructor(readonly maxDepth: number) {
    super(`JSON nested deeper than ${maxDepth} levels`);
    this.name = 'JsonNestingError';
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** Characters a string may hold without escaping: anything but `"`, `\` and C0 controls. */
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;

/**
 * Finds every escape of a valid string that JSON.stringify would not write as it is: `\/`, and a
 * `\u` other than the lower-case `\u00xx` of a control character without a short escape (`\u00e9`,
 * `\u001F`, `\u000a`, surrogates). It may also match inside an escaped backslash (`\\u2028` is
 * text); a match only means the string is re-encoded and compared, so that costs time, not truth.
 */
const MAYBE_NON_CANONICAL_ESCAPE = /\\(?:\/|u(?!00(?:0[0-7bef]|1[0-9a-f])))/;

type Container = JsonObject | JsonArray;

/**
 * The offset of the quote that closes a string whose text goes on at `from`, or -1 when there is
 * none: the first `"` not escaped, i.e. not after an odd run of backslashes. `indexOf` is native,
 * so a long string with an escape every few characters (file text) is not walked in JavaScript.
 */
function closingQuote(raw: string, from: number): number {
  for (let q = raw.indexOf('"', from); q >= 0; q = raw.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (raw.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return -1;
}

/** Parses `raw` (already decoded from UTF-8) into a canonical document. */
export function parseJson(input: string, maxDepth = 16_384): JsonDocument {
  // Text decoded from UTF-8 is always well-formed; a caller's string may not be (section 3).
  const raw = input.isWellFormed() ? input : input.toWellFormed();
  const n = raw.length;
  const parts: string[] = [];
  let i = 0;
  /** Start of the raw span not yet copied into `parts`. */
  let copiedTo = 0;
  /** canonical offset = raw offset + shift (whitespace removed and escapes rewritten move it). */
  let shift = 0;
  let longestString = 0;

  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, i);
  };

  const skipWhitespace = (): void => {
    const from = i;
    while (i < n) {
      const c = raw.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    if (i > from) {
      if (from > copiedTo) parts.push(raw.slice(copiedTo, from));
      copiedTo = i;
      shift -= i - from;
    }
  };

  /**
   * Walks a string that the fast path refused, from just after its opening quote, to report its
   * first fault where it is: a control character, the end of the input, or a bad escape.
   */
  const failInString = (): never => {
    const rawStart = i - 1;
    while (i < n) {
      const c = raw.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) i += 2;
      else if (c < 0x20) fail('control character in string');
      else i++;
    }
    if (i >= n) {
      i = n; // a final backslash stepped past the end
      fail('unterminated string');
    }
    i = rawStart;
    return fail('invalid escape in string');
  };

  /** Reads the string starting at `i` (a `"`), rewriting its raw text when it is not canonical. */
  const readString = (): { value: string; start: number; end: number } => {
    const rawStart = i;
    i++;
    PLAIN_RUN.lastIndex = i;
    PLAIN_RUN.test(raw);
    i = PLAIN_RUN.lastIndex;
    if (i < n && raw.charCodeAt(i) === 0x22) {
      i++;
      return { value: raw.slice(rawStart + 1, i - 1), start: rawStart + shift, end: i + shift };
    }
    // Escapes: find the closing quote, then let the native parser decode the escapes (and refuse a
    // control character or a bad escape).
    const close = closingQuote(raw, i);
    let value: string | undefined;
    if (close >= 0) {
      try {
        value = JSON.parse(raw.slice(rawStart, close + 1)) as string;
      } catch {
        // reported below, where the character-by-character scan finds the first fault
      }
    }
    if (value === undefined) {
      i = rawStart + 1;
      return failInString();
    }
    i = close + 1;
    const rawText = raw.slice(rawStart, i);
    value = value.toWellFormed();
    const start = rawStart + shift;
    // Only an escape JSON.stringify would not write makes the raw text differ from the canonical;
    // without one, re-encoding and comparing a long string (tens of ms for 10 MB) is skipped.
    const canonical = MAYBE_NON_CANONICAL_ESCAPE.test(rawText) ? JSON.stringify(value) : rawText;
    if (canonical !== rawText) {
      if (rawStart > copiedTo) parts.push(raw.slice(copiedTo, rawStart));
      parts.push(canonical);
      copiedTo = i;
      shift += canonical.length - rawText.length;
    }
    return { value, start, end: i + shift };
  };

  const readScalar = (): JsonNode => {
    const c = raw.charCodeAt(i);
    if (c === 0x22) {
      const s = readString();
      if (s.value.length > longestString) longestString = s.value.length;
      return { kind: 'string', value: s.value, start: s.start, end: s.end };
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(raw)) fail('invalid number');
      const start = i + shift;
      i = NUMBER.lastIndex;
      return { kind: 'number', start, end: i + shift };
    }
    for (const word of ['true', 'false', 'null'] as const) {
      if (raw.startsWith(word, i)) {
        const start = i + shift;
        i += word.length;
        return { kind: word, start, end: i + shift };
      }
    }
    return fail(i >= n ? 'unexpected end of JSON' : `unexpected character ${JSON.stringify(raw[i])}`);
  };

  const stack: Container[] = [];
  let root: JsonNode | undefined;

  skipWhitespace();
  // Each turn reads one value (opening a container or reading a scalar), then closes every
  // container that ends after it, then reads the separator (and key) before the next value.
  for (;;) {
    let node: JsonNode;
    const c = raw.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= maxDepth) throw new JsonNestingError(maxDepth);
      const start = i + shift;
      i++;
      const container: Container =
        c === 0x7b
          ? { kind: 'object', keys: [], values: [], start, end: -1 }
          : { kind: 'array', items: [], start, end: -1 };
      skipWhitespace();
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (raw.charCodeAt(i) !== close) {
        stack.push(container);
        if (container.kind === 'object') readKey(container);
        continue;
      }
      i++;
      container.end = i + shift;
      node = container;
    } else {
      node = readScalar();
    }

    // Attach the finished value, then close every container it completes.
    for (;;) {
      const parent = stack[stack.length - 1];
      if (parent === undefined) {
        root = node;
        break;
      }
      if (parent.kind === 'object') parent.values.push(node);
      else parent.items.push(node);
      skipWhitespace();
      const sep = raw.charCodeAt(i);
      if (sep === 0x2c) {
        i++;
        skipWhitespace();
        if (parent.kind === 'object') readKey(parent);
        break;
      }
      if (sep === (parent.kind === 'object' ? 0x7d : 0x5d)) {
        i++;
        parent.end = i + shift;
        stack.pop();
        node = parent;
        continue;
      }
      fail(i >= n ? 'unexpected end of JSON' : `expected ',' or '${parent.kind === 'object' ? '}' : ']'}'`);
    }
    if (root !== undefined) break;
  }

  skipWhitespace();
  if (i < n) fail('unexpected data after the JSON value');
  if (copiedTo < n) parts.push(raw.slice(copiedTo, n));
  return { text: parts.length === 1 ? (parts[0] as string) : parts.join(''), root, longestString };

  function readKey(object: JsonObject): void {
    if (raw.charCodeAt(i) !== 0x22) fail('expected a string key');
    object.keys.push(readString().value);
    skipWhitespace();
    if (raw.charCodeAt(i) !== 0x3a) fail("expected ':'");
    i++;
    skipWhitespace();
  }
}

/** The canonical JSON text of one node of `doc`. */
export function jsonText(doc: JsonDocument, node: JsonNode): string {
  return doc.text.slice(node.start, node.end);
}

/** The last value of `key` in `object` (the one `JSON.parse` and Ruby keep), if any. */
export function member(object: JsonObject, key: string): JsonNode | undefined {
  const at = object.keys.lastIndexOf(key);
  return at === -1 ? undefined : object.values[at];
}
