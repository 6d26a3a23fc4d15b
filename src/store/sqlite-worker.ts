/**
 * The sqlite writer thread. SQLite's statements and, above all, its commits (the WAL write and the
 * fsync of synchronous=FULL) run here, so the main thread keeps parsing and answering requests
 * while a batch commits, and the next batch grows meanwhile.
 *
 * Protocol (messages from sqlite.ts): each `{ id, ops }` is a batch of writes. The thread takes every
 * batch waiting for it into one transaction (group commit does not wait for the main thread to
 * gather the next batch), then answers `{ ids, results }` once it has committed: the batches it
 * held, in order, and their results, flattened in the same order. `{ ids, failed }` when the
 * transaction could not commit. `'close'` closes the file and ends the thread. At start:
 * `{ ready: epoch }`, or `{ openFailed }`.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { SqliteWriter } from './sqlite-writer.js';
import type { WriteOp } from './types.js';

export interface WriterOptions {
  path: string;
  historySize: number;
}

export type WriterReply =
  | { ready: string }
  | { openFailed: string }
  | { ids: number[]; results: ReturnType<SqliteWriter['apply']> }
  | { ids: number[]; failed: string };

/** A batch of writes; `probe` asks for a readiness probe write in its transaction (sqlite-writer.ts). */
export type WriterBatch = { id: number; ops: WriteOp[]; probe?: true };
type WriterMessage = WriterBatch | 'close';

const port = parentPort;
if (!port) throw new Error('sqlite-worker.ts runs as a worker thread of the sqlite store');
const { path, historySize } = workerData as WriterOptions;
const post = (reply: WriterReply): void => port.postMessage(reply);

let writer: SqliteWriter | undefined;
try {
  writer = new SqliteWriter(path, historySize);
  post({ ready: writer.epoch });
} catch (error) {
  post({ openFailed: (error as Error).message });
}

port.on('message', (first: WriterMessage) => {
  const batches: WriterBatch[] = [];
  let closing = false;
  for (let message: WriterMessage | undefined = first; message !== undefined; message = receiveMessageOnPort(port)?.message as WriterMessage | undefined) {
    if (message === 'close') {
      closing = true;
      break;
    }
    batches.push(message);
  }
  if (batches.length > 0) commit(batches);
  if (closing) {
    writer?.close();
    port.close();
  }
});

function commit(batches: WriterBatch[]): void {
  const ids = batches.map((b) => b.id);
  if (!writer) {
    post({ ids, failed: 'the sqlite file is not open' });
    return;
  }
  try {
    post({ ids, results: writer.apply(batches.flatMap((b) => b.ops), batches.some((b) => b.probe)) });
  } catch (error) {
    post({ ids, failed: (error as Error).message });
  }
}
