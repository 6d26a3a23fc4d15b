/**
 * The queue read's reply (docs/protocol.md section 4) as bytes: each entry's `result` is the stored
 * result's bytes and `message.content` their JSON string, escaped straight from those bytes into
 * the reply. A large result is never a JS string on the way out: an 8 MiB result was a 21 MB reply
 * string, and turning it into bytes cost more than everything else a read does.
 */
import { jsonStringLength, writeJsonString } from '../json/string-bytes.js';

/** One queue entry as the store reads it back (store/types.ts calls it StoredQueueEntry). */
export interface QueueReplyEntry {
  queueSeq: number;
  callId: string;
  name: string;
  /** JSON text of the args, or null. */
  argsJson: string | null;
  /** The stored result's JSON text as UTF-8 bytes. */
  result: Buffer;
  /** JSON text of the execution time (a number or null). */
  executionTimeJson: string;
  isError: boolean;
  /** ISO 8601 time the server accepted the result. */
  receivedAt: string;
}

/** A page of the queue as the store reads it (store/types.ts calls it QueuePage). */
export interface QueueReplyPage {
  session: string;
  committed: number;
  head: number;
  /** queue_seq of the oldest entry still kept, 0 when none is. */
  oldest: number;
  entries: QueueReplyEntry[];
}

/** An entry's text around its result: `head` + result + `middle` + content string + `}}`. */
interface EntryParts {
  head: string;
  headBytes: number;
  middle: string;
  middleBytes: number;
  contentBytes: number;
  entry: QueueReplyEntry;
}

function partsOf(e: QueueReplyEntry): EntryParts {
  const callId = JSON.stringify(e.callId);
  const head = `{"queue_seq":${e.queueSeq},"call_id":${callId},"name":${JSON.stringify(e.name)},"args":${e.argsJson ?? 'null'},"result":`;
  const middle =
    `,"execution_time":${e.executionTimeJson},"is_error":${e.isError},"received_at":"${e.receivedAt}",` +
    `"message":{"role":"tool","tool_call_id":${callId},"content":`;
  return { head, headBytes: Buffer.byteLength(head), middle, middleBytes: Buffer.byteLength(middle), contentBytes: jsonStringLength(e.result), entry: e };
}

/** `{"session","committed","head","oldest","entries":[…]}` as UTF-8 bytes. */
export function queuePageReply(page: QueueReplyPage): Buffer {
  const open = `{"session":${JSON.stringify(page.session)},"committed":${page.committed},"head":${page.head},"oldest":${page.oldest},"entries":[`;
  const parts = page.entries.map(partsOf);
  let size = Buffer.byteLength(open) + 2 + Math.max(0, parts.length - 1);
  for (const p of parts) size += p.headBytes + p.entry.result.length + p.middleBytes + p.contentBytes + 2;
  const out = Buffer.allocUnsafe(size);
  let at = out.write(open, 0);
  parts.forEach((p, k) => {
    if (k > 0) out[at++] = 0x2c; // ,
    at += out.write(p.head, at);
    at += p.entry.result.copy(out, at);
    at += out.write(p.middle, at);
    at = writeJsonString(p.entry.result, out, at);
    out[at++] = 0x7d; // }
    out[at++] = 0x7d;
  });
  out[at++] = 0x5d; // ]
  out[at++] = 0x7d;
  if (at !== size) throw new Error(`queue reply: wrote ${at} of ${size} bytes`);
  return out;
}
