/**
 * bench/connection-heap: what one idle subscribed WebSocket connection holds on the server's heap,
 * itemised by the heap snapshot (issue 31, part 1), beside the RSS growth per connection of the
 * server and of the bare ws server (bench/bare-ws.ts).
 *
 * Usage: npm run build && npx tsx bench/connection-heap.ts [-- --connections 10000]
 *
 * Each server runs in a child process with --heapsnapshot-signal=SIGWINCH (close-with-grace stops
 * the server on SIGUSR2). RSS is read from /proc on the fresh server and with N connections, each
 * subscribed to a session of its own; then a heap snapshot (V8 collects garbage first) is taken with
 * them and another once they have closed; the difference of every (node type, name) pair is divided
 * by N, largest first. The last line is the RSS ratio.
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { rssKiB, startChild, stopChild } from './children.js';
import { subscribeAll, type Target } from './harness.js';
import { numberOption } from './options.js';

const CONNECTIONS = numberOption('connections', 10_000);
const TOP = numberOption('top', 25);
const dir = mkdtempSync(join(tmpdir(), 'horologium-heap-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Self bytes and counts of the heap by "type name" (closures, objects by constructor, strings…). */
function itemise(file: string): Map<string, { bytes: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const out = new Map<string, { bytes: number; count: number }>();
  for (let k = 0; k < snap.nodes.length; k += width) {
    const type = types[snap.nodes[k + typeAt] as number] as string;
    // Strings and code are grouped by type alone: their "names" are their contents.
    const name = type === 'object' || type === 'closure' || type === 'native' ? snap.strings[snap.nodes[k + nameAt] as number] : '';
    const key = `${type} ${name}`.trim();
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[k + sizeAt] as number;
    entry.count += 1;
    out.set(key, entry);
  }
  return out;
}

/** Asks the child for a heap snapshot (V8 runs a full GC first) and waits for the file. */
async function heapSnapshot(child: ChildProcess, cwd: string): Promise<string> {
  const before = new Set(readdirSync(cwd));
  child.kill('SIGWINCH');
  for (let k = 0; k < 600; k++) {
    await sleep(500);
    const fresh = readdirSync(cwd).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (fresh.length > 0) {
      // Written when its size stops growing.
      const path = join(cwd, fresh[0] as string);
      let size = -1;
      for (;;) {
        const now = readFileSync(path).length;
        if (now === size && now > 0) return path;
        size = now;
        await sleep(500);
      }
    }
  }
  throw new Error('no heap snapshot was written');
}

async function measure(name: string, script: string[], env: Record<string, string>, port: number, protocol: Target['protocol']) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const child = await startChild(['--heapsnapshot-signal=SIGWINCH', `--diagnostic-dir=${cwd}`, ...script], env, port);
  try {
    // RSS first (a heap snapshot itself grows the RSS): fresh, then with the connections; then the
    // snapshot with them, and after they closed (their objects collected) the snapshot without.
    await sleep(1000);
    const rss0 = rssKiB(child.pid as number);
    const target: Target = { name, protocol, subscribePort: port, postPort: port };
    const subs = await subscribeAll(target, Array.from({ length: CONNECTIONS }, (_, k) => `heap-${k}`), () => {});
    await sleep(3000);
    const rss1 = rssKiB(child.pid as number);
    const full = itemise(await heapSnapshot(child, cwd));
    for (const s of subs) s.close();
    await sleep(3000);
    const empty = itemise(await heapSnapshot(child, cwd));
    const growth = [...full].map(([key, v]) => ({ key, bytes: (v.bytes - (empty.get(key)?.bytes ?? 0)) / CONNECTIONS, count: (v.count - (empty.get(key)?.count ?? 0)) / CONNECTIONS }));
    growth.sort((a, b) => b.bytes - a.bytes);
    const heap = growth.reduce((a, g) => a + g.bytes, 0);
    console.log(`\n### ${name}: heap ${heap.toFixed(0)} B per connection, RSS ${(((rss1 - rss0) * 1024) / CONNECTIONS).toFixed(0)} B per connection\n`);
    console.log('| heap node (type and constructor or name) | bytes per connection | count per connection |');
    console.log('|---|---|---|');
    for (const g of growth.slice(0, TOP)) console.log(`| ${g.key.replace(/\|/g, '\\|')} | ${g.bytes.toFixed(0)} | ${g.count.toFixed(2)} |`);
    return { heap, rss: ((rss1 - rss0) * 1024) / CONNECTIONS };
  } finally {
    await stopChild(child);
  }
}

try {
  const horologium = await measure(
    'Horologium',
    ['dist/server.js'],
    { HOROLOGIUM_STORE: `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn', HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: '100000' },
    18_981,
    'ws',
  );
  const bare = await measure('bare ws', ['--import', 'tsx', 'bench/bare-ws.ts'], {}, 18_982, 'ws');
  console.log(`\nper idle subscribed connection, ${CONNECTIONS} connections: heap ${horologium.heap.toFixed(0)} B vs ${bare.heap.toFixed(0)} B; RSS ${horologium.rss.toFixed(0)} B vs ${bare.rss.toFixed(0)} B: ${(horologium.rss / bare.rss).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
