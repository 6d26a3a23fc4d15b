/**
 * bench/fanout: Horologium's WebSocket fan-out against a bare `ws` broadcast server and Socket.IO 4,
 * driven by one client harness (this process) in the same run.
 *
 * Usage: npm run build && npm run bench:fanout [-- --seconds 5 --idle 10000]
 *
 * Scenarios, each run on the three servers in turn:
 *  - delivered frames/s with 1, 100 and 1,000 subscribers on one session, and 1,000 sessions with
 *    one subscriber each. The producer posts events over HTTP with at most 32 requests in flight and
 *    at most WINDOW events not yet delivered everywhere, so no server is pushed into unbounded
 *    buffering (Horologium would close such a reader with 4008; the peers would just grow).
 *  - POST-to-frame latency at a steady 1,000 events/s into 100 subscribers (p50, p99).
 *  - server RSS per idle subscribed connection, with 10,000 connections on a fresh server.
 * The harness shares the machine's cores with the server under test, as every side-by-side run
 * here does; the ratios are what to read.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { rssKiB, startChild, stopChild } from './children.js';
import { numberOption } from './options.js';
import { agent, latency, sleep, subscribeAll, throughput, type Target, type Throughput } from './harness.js';

const args = process.argv.slice(2);
const SECONDS = numberOption('seconds', 5);
const IDLE_CONNECTIONS = numberOption('idle', 10_000);
/** `--only idle` runs the RSS scenario alone (it is the slow one to tune). */
const ONLY_IDLE = args.includes('--only') && args[args.indexOf('--only') + 1] === 'idle';

type Kind = 'horologium' | 'bare-ws' | 'socket.io';
const KINDS: Kind[] = ['horologium', 'bare-ws', 'socket.io'];
const PORTS: Record<Kind, number> = { horologium: 18_911, 'bare-ws': 18_912, 'socket.io': 18_913 };

const target = (kind: Kind, pid?: number): Target => ({ name: kind, protocol: kind === 'socket.io' ? 'socket.io' : 'ws', subscribePort: PORTS[kind], postPort: PORTS[kind], ...(pid ? { pids: [pid] } : {}) });

const dir = mkdtempSync(join(tmpdir(), 'horologium-fanout-'));

function launch(kind: Kind): Promise<ChildProcess> {
  if (kind === 'horologium') {
    return startChild(['dist/server.js'], { HOROLOGIUM_STORE: `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn', HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: '100000' }, PORTS[kind]);
  }
  return startChild(['--import', 'tsx', kind === 'bare-ws' ? 'bench/bare-ws.ts' : 'bench/socketio-server.ts'], {}, PORTS[kind]);
}

/** Server RSS growth per idle subscribed connection, in KiB, on a freshly started server. */
async function idleRss(kind: Kind, connections: number): Promise<number> {
  const child = await launch(kind);
  try {
    await sleep(1000);
    const before = rssKiB(child.pid as number);
    const subs = await subscribeAll(target(kind), Array.from({ length: connections }, (_, k) => `idle-${k}`), () => {});
    await sleep(3000);
    const after = rssKiB(child.pid as number);
    for (const s of subs) s.close();
    return (after - before) / connections;
  } finally {
    await stopChild(child);
  }
}

// ---- the run ------------------------------------------------------------------------------

const rows: string[] = [];
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
try {
  const scenarios = [
    { label: '1 subscriber, 1 session', sessions: 1, per: 1 },
    { label: '100 subscribers, 1 session', sessions: 1, per: 100 },
    { label: '1,000 subscribers, 1 session', sessions: 1, per: 1000 },
    { label: '1,000 sessions, 1 subscriber each', sessions: 1000, per: 1 },
  ];
  const fps: Record<string, Record<Kind, Throughput>> = {};
  const lat: Partial<Record<Kind, { p50: number; p99: number; samples: number; failedPosts: number }>> = {};
  for (const kind of ONLY_IDLE ? [] : KINDS) {
    const child = await launch(kind);
    try {
      for (const [k, s] of scenarios.entries()) {
        (fps[s.label] ??= {} as Record<Kind, Throughput>)[kind] = await throughput(target(kind, child.pid), `t${k}`, s.sessions, s.per, SECONDS);
      }
      lat[kind] = await latency(target(kind), 100, 1000, SECONDS);
    } finally {
      await stopChild(child);
    }
  }
  const rss: Partial<Record<Kind, number>> = {};
  for (const kind of KINDS) rss[kind] = await idleRss(kind, IDLE_CONNECTIONS);

  rows.push('| measure | Horologium | bare ws | Socket.IO 4 | Horologium / bare ws | Horologium / Socket.IO |');
  rows.push('|---|---|---|---|---|---|');
  for (const s of ONLY_IDLE ? [] : scenarios) {
    const r = fps[s.label] as Record<Kind, Throughput>;
    rows.push(`| delivered frames/s, ${s.label} | ${fmt(r.horologium.fps)} | ${fmt(r['bare-ws'].fps)} | ${fmt(r['socket.io'].fps)} | ${ratio(r.horologium.fps, r['bare-ws'].fps)} | ${ratio(r.horologium.fps, r['socket.io'].fps)} |`);
  }
  // The harness is the ceiling of frames/s at many subscribers; the server's CPU per frame is not.
  for (const s of ONLY_IDLE ? [] : scenarios) {
    const r = fps[s.label] as Record<Kind, Throughput>;
    const c = (k: Kind) => r[k].cpuPerFrame.toFixed(2);
    rows.push(`| server CPU µs per delivered frame (lower is better), ${s.label} | ${c('horologium')} | ${c('bare-ws')} | ${c('socket.io')} | ${ratio(r.horologium.cpuPerFrame, r['bare-ws'].cpuPerFrame)} | ${ratio(r.horologium.cpuPerFrame, r['socket.io'].cpuPerFrame)} |`);
  }
  const l = lat as Record<Kind, { p50: number; p99: number; samples: number; failedPosts: number }>;
  if (!ONLY_IDLE) rows.push(`| POST-to-frame p50, ms, 1,000 events/s into 100 subscribers | ${fmt(l.horologium.p50)} | ${fmt(l['bare-ws'].p50)} | ${fmt(l['socket.io'].p50)} | ${ratio(l.horologium.p50, l['bare-ws'].p50)} | |`);
  if (!ONLY_IDLE) rows.push(`| POST-to-frame p99, ms, same | ${fmt(l.horologium.p99)} | ${fmt(l['bare-ws'].p99)} | ${fmt(l['socket.io'].p99)} | ${ratio(l.horologium.p99, l['bare-ws'].p99)} | |`);
  const m = rss as Record<Kind, number>;
  rows.push(`| server RSS per idle subscribed connection, KiB, ${IDLE_CONNECTIONS} connections | ${fmt(m.horologium)} | ${fmt(m['bare-ws'])} | ${fmt(m['socket.io'])} | ${ratio(m.horologium, m['bare-ws'])} | |`);
  console.log(rows.join('\n'));
  const lost = Object.values(fps).flatMap((r) => Object.entries(r).map(([k, v]) => [k, v.lost] as const)).filter(([, n]) => n !== 0);
  if (!ONLY_IDLE) console.log(`\nframes not delivered: ${lost.length === 0 ? 0 : lost.map(([k, n]) => `${k} ${n}`).join(', ')}; latency samples (failed posts): ${KINDS.map((k) => `${k} ${l[k].samples} (${l[k].failedPosts})`).join(', ')}`);
  console.log(`${SECONDS}s per measured phase after a 1 s warm-up, node ${process.version}`);
} finally {
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
}
