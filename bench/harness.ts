/**
 * The client harness of the stream benchmarks (bench/fanout.ts, bench/scale.ts): subscribers as raw
 * `ws` clients (speaking Socket.IO's wire protocol for Socket.IO), a producer posting events over
 * HTTP, and the two measures (delivered frames per second, POST-to-frame latency). A target may take posts on one port and serve
 * subscribers on another (two instances sharing Redis).
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { WebSocket } from 'ws';
import { cpuMs } from './children.js';

export interface Target {
  name: string;
  protocol: 'ws' | 'socket.io' | 'sse';
  subscribePort: number;
  postPort: number;
  /** The server processes whose CPU time is charged to the delivered frames, if known. */
  pids?: number[];
}

/** User + system CPU time of processes so far, in microseconds (children.ts reads /proc). */
function cpuMicros(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + cpuMs(pid) * 1000, 0);
}

type OnStatus = (frame: Buffer) => void;

const IN_FLIGHT = 32;
const WINDOW = 64;
const PAD = 'p'.repeat(200);

export interface Subscriber {
  close(): void;
}

/** A status frame of the HorologiumAeternum framing: `{"method":"status"`. Byte 12 tells it from `subscribed`. */
function isStatus(data: Buffer): boolean {
  return data.length > 20 && data[12] === 0x74 && data[11] === 0x73;
}

/** A Socket.IO event packet `42["status",…`; byte 5 tells it from `42["subscribed",…`. */
function isSocketIoStatus(data: Buffer): boolean {
  return data[0] === 0x34 && data[1] === 0x32 && data[5] === 0x74;
}

/**
 * One subscriber. Every server is read by the same raw `ws` client, so the client-side cost per
 * frame is the same and the servers are what differs: for Socket.IO the client speaks its wire
 * protocol (Engine.IO 4) itself instead of running socket.io-client, whose decoding would make the
 * harness, not the server, the limit.
 */
export function subscribe(target: Target, session: string, onStatus: OnStatus): Promise<Subscriber> {
  const port = target.subscribePort;
  if (target.protocol === 'sse') return subscribeSse(port, session, onStatus);
  return new Promise((resolve, reject) => {
    const socketIo = target.protocol === 'socket.io';
    const url = socketIo
      ? `ws://127.0.0.1:${port}/socket.io/?EIO=4&transport=websocket&session=${session}`
      : `ws://127.0.0.1:${port}/v1/stream?session=${session}`;
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let ready = false;
    const done = () => {
      ready = true;
      resolve({ close: () => ws.terminate() });
    };
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      if (socketIo) {
        if (isSocketIoStatus(data)) onStatus(data);
        else if (data[0] === 0x30) ws.send('40'); // Engine.IO open: join the default namespace
        else if (data.length === 1 && data[0] === 0x32) ws.send('3'); // ping → pong
        else if (!ready && data[0] === 0x34 && data[1] === 0x32 && data[5] === 0x75) done();
        return;
      }
      if (isStatus(data)) onStatus(data);
      else if (!ready && data[12] === 0x75) done();
    });
  });
}

/**
 * One Server-Sent Events reader of Horologium's /sse stream, on a connection of its own. Records are
 * split on their blank line; a record that starts with `id:` is a status event.
 */
function subscribeSse(port: number, session: string, onStatus: OnStatus): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/v1/sessions/${session}/sse`, agent: false }, (res) => {
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const record = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (record.startsWith('id:')) onStatus(Buffer.from(record.slice(record.indexOf('\ndata: ') + 7)));
          else if (record.startsWith('event: subscribed')) resolve({ close: () => req.destroy() });
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The `t` the producer put in a status frame's data, whichever server framed it. */
export function sentAt(target: Target, frame: Buffer): number {
  const text = frame.toString();
  const status = target.protocol === 'socket.io' ? (JSON.parse(text.slice(2)) as [string, StatusFrame])[1] : (JSON.parse(text) as StatusFrame);
  return status.result.data.t;
}

interface StatusFrame {
  result: { data: { t: number } };
}

export async function subscribeAll(target: Target, sessions: string[], onStatus: OnStatus): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  for (let k = 0; k < sessions.length; k += 200) {
    subs.push(...(await Promise.all(sessions.slice(k, k + 200).map((s) => subscribe(target, s, onStatus)))));
  }
  return subs;
}

export const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

export function post(target: Target, session: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: target.postPort, method: 'POST', path: `/v1/sessions/${session}/events`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 202 ? resolve() : reject(new Error(`${target.name}: POST answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const eventBody = (n: number) => `{"type":"bench","data":{"n":${n},"t":${performance.timeOrigin + performance.now()},"pad":"${PAD}"}}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Delivered frames per second with `perSession` subscribers on each of `sessionCount` sessions. */
export interface Throughput {
  fps: number;
  lost: number;
  /** Server CPU per delivered frame, µs (NaN when the target names no pids). */
  cpuPerFrame: number;
}

export async function throughput(target: Target, label: string, sessionCount: number, perSession: number, seconds: number): Promise<Throughput> {
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
      post(target, sessions[n % sessionCount] as string, eventBody(n)).then(
        () => {
          inFlight--;
          pump();
        },
        (e: Error) => (failure = e),
      );
    }
  };
  const subs = await subscribeAll(target, sessions.flatMap((s) => Array.from({ length: perSession }, () => s)), () => {
    frames++;
    lastFrameAt = performance.now();
    if ((frames & 63) === 0) pump();
  });
  const phase = async (ms: number) => {
    frames = 0;
    posted = 0;
    const started = performance.now();
    const cpuBefore = target.pids ? cpuMicros(target.pids) : NaN;
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
    const cpu = target.pids ? cpuMicros(target.pids) - cpuBefore : NaN;
    return { fps: frames / ((lastFrameAt - started) / 1000), lost: posted * perSession - frames, cpuPerFrame: cpu / frames };
  };
  await phase(1000); // warm-up
  const measured = await phase(seconds * 1000);
  for (const s of subs) s.close();
  if (failure) throw failure;
  return measured;
}

/** POST-to-frame latency in ms at a steady `rate` events/s into `subscribers` on one session. */
export async function latency(target: Target, subscribers: number, rate: number, seconds: number): Promise<{ p50: number; p99: number; samples: number; failedPosts: number }> {
  const session = `lat-${randomUUID().slice(0, 8)}`;
  const samples: number[] = [];
  // A keep-alive socket the server closes as a POST goes out resets that POST (Node's keep-alive
  // race): count it, as a frame that never comes, rather than crash the run.
  let failedPosts = 0;
  let recording = false;
  const subs = await subscribeAll(target, Array.from({ length: subscribers }, () => session), (frame) => {
    if (!recording) return;
    samples.push(performance.timeOrigin + performance.now() - sentAt(target, frame));
  });
  const run = async (ms: number) => {
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < ms) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      for (; sent < due; sent++) {
        post(target, session, eventBody(sent)).catch(() => {
          failedPosts++;
        });
      }
      await sleep(2);
    }
    await sleep(500);
  };
  await run(1000);
  recording = true;
  await run(seconds * 1000);
  recording = false;
  for (const s of subs) s.close();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), samples: samples.length, failedPosts };
}

