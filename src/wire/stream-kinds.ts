/**
 * The stream kinds: `ws` (/v1/stream), `sse` (…/sse), `ag_ui` (…/ag-ui and POST /v1/ag-ui),
 * `ui_message` (…/ui-message-stream, the AI SDK's UI message stream).
 */
export const STREAM_KINDS = ['ws', 'sse', 'ag_ui', 'ui_message'] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];
