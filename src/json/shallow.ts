/**
 * A shallow plain-object view of a body's top-level members, for validating the request envelope
 * with zod without materialising (and losing precision in) large or deep values: scalars become
 * their JavaScript values, containers become empty containers of the same kind. The lossless tree
 * stays the source of every byte that is stored or sent.
 */
import type { JsonDocument, JsonNode, JsonObject } from './lossless.js';

function shallowValue(doc: JsonDocument, node: JsonNode): unknown {
  switch (node.kind) {
    case 'string':
      return node.value;
    case 'number':
      return Number(doc.text.slice(node.start, node.end));
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
    case 'array':
      return [];
    case 'object':
      return {};
  }
}

/** Last occurrence wins, as with JSON.parse; a null prototype keeps `__proto__` an ordinary key. */
export function shallowView(doc: JsonDocument, object: JsonObject): Record<string, unknown> {
  const view: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  object.keys.forEach((key, k) => {
    view[key] = shallowValue(doc, object.values[k] as JsonNode);
  });
  return view;
}
