/**
 * bench/writer-thread: CPU per write of the sqlite writer itself (sqlite-writer.ts, in this thread,
 * no worker, no HTTP): 20,000 2 KiB tool results in batches of 25 (about what group commit
 * gathers at 50 connections), WAL, synchronous=FULL, on a fresh file. CPU from process.cpuUsage
 * (user + system, so the fsyncs count), which is steadier here than the whole server under load.
 * Usage: npx tsx bench/writer-thread.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteWriter } from '../src/store/sqlite-writer.js';
import type { WriteOp } from '../src/store/types.js';

const BATCH = Number(process.env.BATCH ?? 25);
const WRITES = 20_000;
const dir = mkdtempSync(join(tmpdir(), 'horologium-writer-'));
const content = 'x'.repeat(1900);
function op(k: number): WriteOp {
  const resultJson = `{"content":"${content}","n":${k},"path":"src/app.ts"}`;
  return {
    kind: 'complete',
    session: 's',
    input: {
      callId: `c${k}`, name: 'grep', argsJson: null, resultJson, executionTimeJson: null, isError: false, fingerprint: `f${k}`,
      completed: { name: 'grep', callId: `c${k}`, isError: false, previewJson: JSON.stringify(content), argumentsJson: null, resultBytes: Buffer.byteLength(resultJson), truncated: false },
    },
  };
}
try {
  const writer = new SqliteWriter(join(dir, 'w.db'), 1000);
  for (let round = 0; round < 3; round++) {
    const ops = Array.from({ length: WRITES }, (_, k) => op(round * WRITES + k));
    const start = process.cpuUsage();
    for (let b = 0; b < WRITES; b += BATCH) writer.apply(ops.slice(b, b + BATCH));
    const used = process.cpuUsage(start);
    console.log(`round ${round + 1}: ${((used.user + used.system) / WRITES).toFixed(1)} µs CPU per write (user ${(used.user / WRITES).toFixed(1)}, system ${(used.system / WRITES).toFixed(1)})`);
  }
  writer.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
