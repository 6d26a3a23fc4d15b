/** The three streams: `ws` (/v1/stream), `sse` (…/sse), `ag_ui` (…/ag-ui and POST /v1/ag-ui). */
export const STREAM_KINDS = ['ws', 'sse', 'ag_ui'] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];
