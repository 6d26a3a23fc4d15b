/**
 * bench/store-writes: microseconds per completeCall straight on the store (no HTTP), 20,000 writes
 * of 2 KiB in batches of 50, sqlite (WAL, synchronous=FULL) and memory. Usage: npx tsx bench/store-writes.ts
 */
import { SqliteStore } from '../src/store/sqlite.js';
import { MemoryStore } from '../src/store/memory.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'horologium-store-bench-'));
for (const store of [new SqliteStore(dir + '/a.db', { historySize: 1000 }), new MemoryStore({ historySize: 1000 })]) {
  await store.open();
  const r = 'x'.repeat(2000);
  const t0 = performance.now();
  for (let b = 0; b < 400; b++) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => store.completeCall('s', { callId: `c${b}-${k}`, name: 'n', argsJson: null, resultJson: `"${r}"`, executionTimeJson: null, isError: false, fingerprint: `f${b}-${k}`, completed: { name: "n", callId: `c${b}-${k}`, isError: false, previewJson: `"${r}"`, argumentsJson: null, resultBytes: r.length + 2, truncated: false } })));
  }
  console.log(store.kind, ((performance.now() - t0) * 1000 / 20000).toFixed(1), 'µs per completeCall (batches of 50)');
}
rmSync(dir, { recursive: true, force: true });
