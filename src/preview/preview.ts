/**
 * The UI route's preview (`ui_preview`, docs/protocol.md section 2), computed on the lossless tree so
 * that key order and numbers survive, and with Ruby's truthiness rather than JavaScript's.
 */
import { jsonText, member, type JsonDocument, type JsonNode } from '../json/lossless.js';
import { truncate } from './truncate.js';

export interface PreviewOptions {
  /** Truncation limit in code points (HOROLOGIUM_PREVIEW_LIMIT, default 4000). */
  limit: number;
  /** Tool names whose object results pass through untouched (HOROLOGIUM_PASSTHROUGH_TOOLS). */
  passthroughTools: ReadonlySet<string>;
}

/** `text(v)`: a string is itself, null is "", everything else is its JSON text as sent. */
export function textOf(doc: JsonDocument, node: JsonNode): string {
  if (node.kind === 'string') return node.value;
  if (node.kind === 'null') return '';
  return jsonText(doc, node);
}

/** A preview: its JSON text, and whether truncation shortened its text (v1.2 `truncated`). */
export interface Preview {
  json: string;
  truncated: boolean;
}

/** The preview of `node` as JSON text, ready to be placed in a frame. */
export function previewJson(doc: JsonDocument, node: JsonNode, name: string, options: PreviewOptions): string {
  return preview(doc, node, name, options).json;
}

/**
 * The preview of `node`, and whether it was cut: a pass-through object never is, and collapsing an
 * object to its `content` is not cutting (docs/protocol.md section 12).
 */
export function preview(doc: JsonDocument, node: JsonNode, name: string, options: PreviewOptions): Preview {
  if (node.kind === 'object') {
    if (options.passthroughTools.has(name)) return { json: jsonText(doc, node), truncated: false };
    const content = member(node, 'content');
    // Ruby: `result['content'] || result.to_json`; only nil and false are falsy.
    const chosen = content !== undefined && content.kind !== 'null' && content.kind !== 'false' ? content : node;
    return previewOf(doc, chosen, options.limit);
  }
  return previewOf(doc, node, options.limit);
}

/**
 * `text(node)` truncated, as JSON text. A string short enough to stay whole is its own canonical
 * text (the lossless reader escapes strings exactly as JSON.stringify does), so it is sliced, not
 * escaped again: escaping a 2 KiB `content` cost ~2.5 µs of every tool result (BENCHMARKS.md).
 */
function previewOf(doc: JsonDocument, node: JsonNode, limit: number): Preview {
  const text = textOf(doc, node);
  const cut = truncate(text, limit);
  const truncated = cut !== text;
  return { json: !truncated && node.kind === 'string' ? jsonText(doc, node) : JSON.stringify(cut), truncated };
}
