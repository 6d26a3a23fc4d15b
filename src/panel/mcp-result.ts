/**
 * An MCP tool result read as what it says (issue 46, part 8). A `CallToolResult`
 * (`{"content":[{"type":"text","text":…},…],"isError":…}`) posted as a result has its `content`
 * array as its preview (docs/protocol.md section 2), which arrives as that array's JSON text: its
 * text items are shown as text, an image or audio item by its type, MIME type and size, a resource
 * by its URI (and its text, when it has one). A preview that was cut is no longer JSON and stays
 * plain text. An error card comes from `is_error`, which the MCP proxy posts from `isError`.
 */
import { el } from './dom.js';

interface McpItem {
  type: string;
  [member: string]: unknown;
}

/** The items of an MCP `content` array given as JSON text, or undefined when `preview` is not one. */
export function mcpContent(preview: unknown): McpItem[] | undefined {
  if (typeof preview !== 'string' || !preview.startsWith('[{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(preview);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const items = parsed.every((item) => typeof item === 'object' && item !== null && typeof (item as McpItem).type === 'string');
  return items ? (parsed as McpItem[]) : undefined;
}

/** Bytes of base64 data, for "image/png, 12 KB". */
function decodedSize(data: unknown): string {
  if (typeof data !== 'string') return '';
  const bytes = Math.floor((data.replace(/=+$/, '').length * 3) / 4);
  return bytes >= 1024 ? `, ${(bytes / 1024).toFixed(bytes >= 10_240 ? 0 : 1)} KB` : `, ${bytes} bytes`;
}

function itemView(item: McpItem): HTMLElement {
  if (item.type === 'text' && typeof item.text === 'string') return el('pre', { class: 'mcp-text' }, item.text);
  if ((item.type === 'image' || item.type === 'audio') && typeof item.mimeType === 'string') {
    return el('p', { class: 'mcp-media', 'data-type': item.type }, `${item.type}: ${item.mimeType}${decodedSize(item.data)}`);
  }
  if ((item.type === 'resource' || item.type === 'resource_link') && typeof item.resource === 'object' && item.resource !== null) {
    const resource = item.resource as { uri?: unknown; text?: unknown };
    return el('div', { class: 'mcp-resource' }, el('p', {}, `resource: ${String(resource.uri ?? '')}`), typeof resource.text === 'string' ? el('pre', { class: 'mcp-text' }, resource.text) : null);
  }
  if (item.type === 'resource_link' && typeof item.uri === 'string') return el('p', { class: 'mcp-resource' }, `resource: ${item.uri}`);
  return el('p', { class: 'mcp-other', 'data-type': item.type }, `${item.type} item`);
}

/** The items, one after the other. */
export function mcpView(items: McpItem[]): HTMLElement {
  return el('div', { class: 'mcp' }, ...items.map(itemView));
}
