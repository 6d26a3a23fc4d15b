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
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { io as ioClient } from 'socket.io-client';
import { WebSocket } from 'ws';
import { rssKiB, startChild, stopChild } from './children.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const SECONDS = opt('seconds', 5);
const IDLE_CONNECTIONS = opt('idle', 10_000);
/** `--only idle` runs the RSS scenario alone (it is the slow one to tune). */
const ONLY_IDLE = args.includes('--only') && args[args.indexOf('--only') + 1] === 'idle';
const IN_FLIGHT = 32;
const WINDOW = 64;
const PAD = 'p'.repeat(200);

type Kind = 'horologium' | 'bare-ws' | 'socket.io';
const KINDS: Kind[] = ['horologium', 'bare-ws', 'socket.io'];
const PORTS: Record<Kind, number> = { horologium: 18_911, 'bare-ws': 18_912, 'socket.io': 18_913 };

const dir = mkdtempSync(join(tmpdir(), 'horologium-fanout-'));

function launch(kind: Kind): Promise<ChildProcess> {
  if (kind === 'horologium') {
    return startChild(['dist/server.js'], { HOROLOGIUM_STORE: `sqlite:${join(dir, `${randomUUID()}.db`)}`, LOG_LEVEL: 'warn', HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: '100000' }, PORTS[kind]);
  }
  return startChild(['--import', 'tsx', kind === 'bare-ws' ? 'bench/bare-ws.ts' : 'bench/socketio-server.ts'], {}, PORTS[kind]);
}

// ---- the client harness -------------------------------------------------------------------

interface Subscriber {
  close(): void;
}

/** A status frame of the HorologiumAeternum framing: `{"method":"status"`. Byte 12 tells it from `subscribed`. */
function isStatus(data: Buffer): boolean {
  return data.length > 20 && data[12] === 0x74 && data[11] === 0x73;
}

function subscribe(kind: Kind, session: string, onStatus: (frame: Buffer | { result: { data: { t: number } } }) => void): Promise<Subscriber> {
  const port = PORTS[kind];
  return new Promise((resolve, reject) => {
    if (kind === 'socket.io') {
      const socket = ioClient(`http://127.0.0.1:${port}`, { transports: ['websocket'], query: { session }, forceNew: true, reconnection: false });
      socket.on('connect_error', reject);
      socket.on('subscribed', () => resolve({ close: () => socket.close() }));
      socket.on('status', onStatus);
      return;
    }
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/stream?session=${session}`, { perMessageDeflate: false });
    let ready = false;
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      if (isStatus(data)) onStatus(data);
      else if (!ready && data[12] === 0x75) {
        ready = true;
        resolve({ close: () => ws.terminate() });
      }
    });
  });
}

async function subscribeAll(kind: Kind, sessions: string[], onStatus: Parameters<typeof subscribe>[2]): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  for (let k = 0; k < sessions.length; k += 200) {
    subs.push(...(await Promise.all(sessions.slice(k, k + 200).map((s) => subscribe(kind, s, onStatus)))));
  }
  return subs;
}

const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

function post(kind: Kind, session: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: PORTS[kind], method: 'POST', path: `/v1/sessions/${session}/events`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 202 ? resolve() : reject(new Error(`${kind}: POST answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const eventBody = (n: number) => `{"type":"bench","data":{"n":${n},"t":${performance.timeOrigin + performance.now()},"pad":"${PAD}"}}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Delivered frames per second with `perSession` subscribers on each of `sessionCount` sessions. */
async function throughput(kind: Kind, label: string, sessionCount: number, perSession: number): Promise<{ fps: number; lost: number }> {
  const sessions = Array.from({ length: sessionCount }, (_, k) => `${label}-${k}`);
  let frames = 0;
  let lastFrameAt = 0;
  let posted = 0;
  let inFlight = 0;
  let producing = false;
  let failure: Error | undefined;
  const pump = () => {
    while (producing && inFlight < IN_FLIGHT && posted - frames / perSession < WINDOW) {
      const n = posted++;
      inFlight++;
      post(kind, sessions[n % sessionCount] as string, eventBody(n)).then(
        () => {
          inFlight--;
          pump();
        },
        (e: Error) => (failure = e),
      );
    }
  };
  const subs = await subscribeAll(kind, sessions.flatMap((s) => Array.from({ length: perSession }, () => s)), () => {
    frames++;
    lastFrameAt = performance.now();
    if ((frames & 63) === 0) pump();
  });
  const phase = async (ms: number) => {
    frames = 0;
    posted = 0;
    const started = performance.now();
    producing = true;
    pump();
    await sleep(ms);
    producing = false;
    // Drain: everything posted is delivered, or nothing has arrived for 2 s.
    for (let idle = 0; frames < posted * perSession && idle < 20; idle++) {
      const before = frames;
      await sleep(100);
      if (frames !== before) idle = 0;
    }
    while (inFlight > 0) await sleep(10);
    return { fps: frames / ((lastFrameAt - started) / 1000), lost: posted * perSession - frames };
  };
  await phase(1000); // warm-up
  const measured = await phase(SECONDS * 1000);
  for (const s of subs) s.close();
  if (failure) throw failure;
  return measured;
}

/** POST-to-frame latency in ms at a steady `rate` events/s into `subscribers` on one session. */
async function latency(kind: Kind, subscribers: number, rate: number): Promise<{ p50: number; p99: number; samples: number }> {
  const session = `lat-${randomUUID().slice(0, 8)}`;
  const samples: number[] = [];
  let recording = false;
  const subs = await subscribeAll(kind, Array.from({ length: subscribers }, () => session), (frame) => {
    if (!recording) return;
    const parsed = Buffer.isBuffer(frame) ? (JSON.parse(frame.toString()) as { result: { data: { t: number } } }) : frame;
    samples.push(performance.timeOrigin + performance.now() - parsed.result.data.t);
  });
  const run = async (ms: number) => {
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < ms) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      for (; sent < due; sent++) void post(kind, session, eventBody(sent));
      await sleep(2);
    }
    await sleep(500);
  };
  await run(1000);
  recording = true;
  await run(SECONDS * 1000);
  recording = false;
  for (const s of subs) s.close();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), samples: samples.length };
}

/** Server RSS growth per idle subscribed connection, in KiB, on a freshly started server. */
async function idleRss(kind: Kind, connections: number): Promise<number> {
  const child = await launch(kind);
  try {
    await sleep(1000);
    const before = rssKiB(child.pid as number);
    const subs = await subscribeAll(kind, Array.from({ length: connections }, (_, k) => `idle-${k}`), () => {});
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
  const fps: Record<string, Record<Kind, { fps: number; lost: number }>> = {};
  const lat: Partial<Record<Kind, { p50: number; p99: number; samples: number }>> = {};
  for (const kind of ONLY_IDLE ? [] : KINDS) {
    const child = await launch(kind);
    try {
      for (const [k, s] of scenarios.entries()) {
        (fps[s.label] ??= {} as Record<Kind, { fps: number; lost: number }>)[kind] = await throughput(kind, `t${k}`, s.sessions, s.per);
      }
      lat[kind] = await latency(kind, 100, 1000);
    } finally {
      await stopChild(child);
    }
  }
  const rss: Partial<Record<Kind, number>> = {};
  for (const kind of KINDS) rss[kind] = await idleRss(kind, IDLE_CONNECTIONS);

  rows.push('| measure | Horologium | bare ws | Socket.IO 4 | Horologium / bare ws | Horologium / Socket.IO |');
  rows.push('|---|---|---|---|---|---|');
  for (const s of ONLY_IDLE ? [] : scenarios) {
    const r = fps[s.label] as Record<Kind, { fps: number }>;
    rows.push(`| delivered frames/s, ${s.label} | ${fmt(r.horologium.fps)} | ${fmt(r['bare-ws'].fps)} | ${fmt(r['socket.io'].fps)} | ${ratio(r.horologium.fps, r['bare-ws'].fps)} | ${ratio(r.horologium.fps, r['socket.io'].fps)} |`);
  }
  const l = lat as Record<Kind, { p50: number; p99: number; samples: number }>;
  if (!ONLY_IDLE) rows.push(`| POST-to-frame p50, ms, 1,000 events/s into 100 subscribers | ${fmt(l.horologium.p50)} | ${fmt(l['bare-ws'].p50)} | ${fmt(l['socket.io'].p50)} | ${ratio(l.horologium.p50, l['bare-ws'].p50)} | |`);
  if (!ONLY_IDLE) rows.push(`| POST-to-frame p99, ms, same | ${fmt(l.horologium.p99)} | ${fmt(l['bare-ws'].p99)} | ${fmt(l['socket.io'].p99)} | ${ratio(l.horologium.p99, l['bare-ws'].p99)} | |`);
  const m = rss as Record<Kind, number>;
  rows.push(`| server RSS per idle subscribed connection, KiB, ${IDLE_CONNECTIONS} connections | ${fmt(m.horologium)} | ${fmt(m['bare-ws'])} | ${fmt(m['socket.io'])} | ${ratio(m.horologium, m['bare-ws'])} | |`);
  console.log(rows.join('\n'));
  const lost = Object.values(fps).flatMap((r) => Object.entries(r).map(([k, v]) => [k, v.lost] as const)).filter(([, n]) => n !== 0);
  if (!ONLY_IDLE) console.log(`\nframes not delivered: ${lost.length === 0 ? 0 : lost.map(([k, n]) => `${k} ${n}`).join(', ')}; latency samples: ${KINDS.map((k) => `${k} ${l[k].samples}`).join(', ')}`);
  console.log(`${SECONDS}s per measured phase after a 1 s warm-up, node ${process.version}`);
} finally {
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
}
