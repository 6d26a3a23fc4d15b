/**
 * A status frame read back for the formats that re-encode it (AG-UI, the AI SDK's UI message
 * stream): its plain fields, and the exact JSON text of any member of its data, taken with the
 * lossless reader so that the texts those formats carry keep their numbers and key order.
 */
import { jsonText, member, parseJson, type JsonDocument, type JsonObject } from '../json/lossless.js';

export interface StatusView {
  type: string;
  /** The data as plain values: for names, ids and flags, never to re-encode a value. */
  data: Record<string, unknown>;
  /** Seconds since the epoch. */
  timestamp: number;
  uuid: string;
  /** The JSON text of `data.<key>` exactly as stored; undefined when absent. */
  dataMemberText(key: string): string | undefined;
  /** The JSON text of `data` exactly as stored. */
  dataText(): string;
}

export function statusView(frame: string): StatusView {
  const { type, data, timestamp, uuid } = (JSON.parse(frame) as { result: { type: string; data: Record<string, unknown>; timestamp: number; uuid: string } }).result;
  // Parsed losslessly only when a text is asked for, and then once.
  let lossless: { doc: JsonDocument; data: JsonObject } | undefined;
  const read = () => {
    if (!lossless) {
      const doc = parseJson(frame);
      const result = member(doc.root as JsonObject, 'result') as JsonObject;
      lossless = { doc, data: member(result, 'data') as JsonObject };
    }
    return lossless;
  };
  return {
    type,
    data,
    timestamp,
    uuid,
    dataMemberText: (key) => {
      const { doc, data } = read();
      const node = member(data, key);
      return node ? jsonText(doc, node) : undefined;
    },
    dataText: () => jsonText(read().doc, read().data),
  };
}
