/**
 * Values given to the producer as JSON text, sent as that text: the way to keep what JSON.parse
 * would lose (integers past 2^53, `1.0`, `-0`, the place of integer-like keys that a JS object moves first) and to post a
 * large result that is already serialised without parsing and re-serialising it.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Marks JSON text to be sent as is. The server validates it; malformed text is a 400 INVALID_JSON. */
export function rawJson(text: string): RawJson {
  if (typeof text !== 'string' || text.trim() === '') throw new TypeError('rawJson needs a non-empty JSON text');
  return new RawJson(text);
}

/** The JSON text of a value: a RawJson's own text, anything else through JSON.stringify. */
export function jsonTextOf(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`a ${typeof value} has no JSON text`);
  return text;
}

/** Above this a body is sent as a Blob of its parts, so a large result is not concatenated first. */
const CONCAT_LIMIT = 1 << 20;

/**
 * A JSON object's body from members already in JSON text, built once for every retry. Members
 * whose value is undefined are left out.
 */
export function objectBody(members: Array<[string, string | undefined]>): string | Blob {
  const parts: string[] = [];
  let size = 0;
  for (const [key, text] of members) {
    if (text === undefined) continue;
    parts.push(`${parts.length === 0 ? '{' : ','}${JSON.stringify(key)}:`, text);
    size += text.length;
  }
  parts.push(parts.length === 0 ? '{}' : '}');
  return size < CONCAT_LIMIT ? parts.join('') : new Blob(parts);
}
