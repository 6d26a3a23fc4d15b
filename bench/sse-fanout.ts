/**
 * bench/sse-fanout: the SSE stream (docs/protocol.md section 10) against the WebSocket stream of the
 * same Horologium server, in the same run: delivered frames/s and server CPU per delivered frame with
 * 1,000 readers of one session, and with 1,000 sessions of one reader each. Both go through the same
 * Connection (replay-then-live, buffer limit); what differs is the transport.
 *
 * Usage: npm run build && npx tsx bench/sse-fanout.ts [-- --seconds 5]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, stopChild } from './children.js';
import { agent, throughput, type Target, type Throughput } from './harness.js';
import { median, numberOption } from './options.js';

const SECONDS = numberOption('seconds', 5);
const ROUNDS = numberOption('rounds', 3);
const PORT = 18_921;
const dir = mkdtempSync(join(tmpdir(), 'horologium-sse-'));
const scenarios = [
  { label: '1,000 readers, 1 session', sessions: 1, per: 1000 },
  { label: '1,000 sessions, 1 reader each', sessions: 1000, per: 1 },
];

const child = await startChild(
  ['dist/server.js'],
  { HOROLOGIUM_STORE: `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn', HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: '100000' },
  PORT,
);
try {
  const target = (protocol: 'ws' | 'sse'): Target => ({ name: protocol, protocol, subscribePort: PORT, postPort: PORT, pids: [child.pid as number] });
  const results: Record<string, Record<'ws' | 'sse', Throughput[]>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, s] of scenarios.entries()) {
      // Alternating which goes first, so that neither always meets a warmer server.
      for (const protocol of round % 2 === 0 ? (['ws', 'sse'] as const) : (['sse', 'ws'] as const)) {
        ((results[s.label] ??= { ws: [], sse: [] })[protocol]).push(await throughput(target(protocol), `r${round}s${k}${protocol}`, s.sessions, s.per, SECONDS));
      }
    }
  }
  console.log('| measure (median of rounds) | SSE | WebSocket | SSE / WebSocket |');
  console.log('|---|---|---|---|');
  for (const s of scenarios) {
    const r = results[s.label] as Record<'ws' | 'sse', Throughput[]>;
    const fps = (p: 'ws' | 'sse') => median(r[p].map((x) => x.fps));
    const cpu = (p: 'ws' | 'sse') => median(r[p].map((x) => x.cpuPerFrame));
    console.log(`| delivered frames/s, ${s.label} | ${fps('sse').toFixed(0)} | ${fps('ws').toFixed(0)} | ${(fps('sse') / fps('ws')).toFixed(2)}x |`);
    console.log(`| server CPU µs per delivered frame, ${s.label} | ${cpu('sse').toFixed(2)} | ${cpu('ws').toFixed(2)} | ${(cpu('sse') / cpu('ws')).toFixed(2)}x |`);
  }
  const lost = Object.values(results).flatMap((r) => [...r.ws, ...r.sse]).reduce((n, x) => n + x.lost, 0);
  console.log(`\nframes not delivered: ${lost}; ${ROUNDS} rounds of ${SECONDS} s after a 1 s warm-up each, node ${process.version}`);
  const first = results[scenarios[0]!.label] as Record<'ws' | 'sse', Throughput[]>;
  console.log(`SSE / WebSocket frames/s, 1,000 readers of one session: ${(median(first.sse.map((x) => x.fps)) / median(first.ws.map((x) => x.fps))).toFixed(2)}x`);
} finally {
  agent.destroy();
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
