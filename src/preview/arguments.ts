/**
 * The `args`/`arguments` pair of tool events (docs/protocol.md section 4): `args` is a one-line echo of
 * the call's arguments, `arguments` the arguments themselves with every long string value truncated.
 */
import { jsonText, type JsonDocument, type JsonNode, type JsonString } from '../json/lossless.js';
import { textOf } from './preview.js';
import { truncate } from './truncate.js';

/** `args` is always truncated to 120 code points, whatever the preview limit. */
export const ARGS_ECHO_LIMIT = 120;

export interface ArgumentTexts {
  /** JSON text of the `args` member of the event data: a string. */
  echo: string;
  /** JSON text of the `arguments` member of the event data. */
  arguments: string;
}

/** The pair for calls that sent no `args`. */
export const NO_ARGUMENTS: ArgumentTexts = { echo: '""', arguments: 'null' };

export function argumentTexts(doc: JsonDocument, args: JsonNode | undefined, limit: number): ArgumentTexts {
  if (args === undefined) return NO_ARGUMENTS;
  return {
    echo: JSON.stringify(truncate(textOf(doc, args), ARGS_ECHO_LIMIT)),
    arguments: withLongStringsTruncated(doc, args, limit),
  };
}

/**
 * The JSON text of `node` with every string value longer than `limit` code points truncated; keys
 * are left as sent. Splices the canonical text around the long strings, walking iteratively.
 */
export function withLongStringsTruncated(doc: JsonDocument, node: JsonNode, limit: number): string {
  if (doc.longestString <= limit) return jsonText(doc, node);
  const long: JsonString[] = [];
  const pending: JsonNode[] = [node];
  while (pending.length > 0) {
    const next = pending.pop() as JsonNode;
    if (next.kind === 'string') {
      if (next.value.length > limit) long.push(next);
    } else if (next.kind === 'object' || next.kind === 'array') {
      const children = next.kind === 'object' ? next.values : next.items;
      for (let k = children.length - 1; k >= 0; k--) pending.push(children[k] as JsonNode);
    }
  }
  let out = '';
  let from = node.start;
  for (const s of long) {
    out += doc.text.slice(from, s.start) + JSON.stringify(truncate(s.value, limit));
    from = s.end;
  }
  return out + doc.text.slice(from, node.end);
}
