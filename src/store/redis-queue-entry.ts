/**
 * How the redis backend keeps a queue entry (one hash field per entry): the entry without its
 * result as JSON, a newline, then the result's JSON text as it is. The result is never escaped
 * into another JSON text, so a write does not re-encode a large result and a read hands its bytes
 * to the reply as they are (wire/queue-reply.ts), never making a JS string of it. JSON text has no
 * raw newline, so the first one ends the header.
 *
 * Entries written before this form are one JSON text of the whole entry (no newline anywhere);
 * they are still read.
 */
import { storedEntry } from './ledger.js';
import type { QueueEntry, StoredQueueEntry } from './types.js';

type Header = Omit<QueueEntry, 'queueSeq' | 'resultJson'>;

export function encodeQueueEntry(entry: Omit<QueueEntry, 'queueSeq'>): string {
  const { resultJson, ...header } = entry;
  return `${JSON.stringify(header)}\n${resultJson}`;
}

export function decodeQueueEntry(queueSeq: number, value: Buffer): StoredQueueEntry {
  const newline = value.indexOf(0x0a);
  if (newline < 0) {
    return storedEntry({ queueSeq, ...(JSON.parse(value.toString()) as Omit<QueueEntry, 'queueSeq'>) });
  }
  const header = JSON.parse(value.toString('utf8', 0, newline)) as Header;
  return { queueSeq, ...header, result: value.subarray(newline + 1) };
}
