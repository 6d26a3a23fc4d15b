/**
 * The client harness of the stream benchmarks (bench/fanout.ts, bench/scale.ts): subscribers over
 * `ws` or `socket.io-client`, a producer posting events over HTTP, and the two measures (delivered
 * frames per second, POST-to-frame latency). A target may take posts on one port and serve
 * subscribers on another (two instances sharing Redis).
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { io as ioClient } from 'socket.io-client';
import { WebSocket } from 'ws';

export interface Target {
  name: string;
  protocol: 'ws' | 'socket.io';
  subscribePort: number;
  postPort: number;
}

type OnStatus = (frame: Buffer | { result: { data: { t: number } } }) => void;

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

export function subscribe(target: Target, session: string, onStatus: OnStatus): Promise<Subscriber> {
  const port = target.subscribePort;
  return new Promise((resolve, reject) => {
    if (target.protocol === 'socket.io') {
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
export async function throughput(target: Target, label: string, sessionCount: number, perSession: number, seconds: number): Promise<{ fps: number; lost: number }> {
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
  const measured = await phase(seconds * 1000);
  for (const s of subs) s.close();
  if (failure) throw failure;
  return measured;
}

/** POST-to-frame latency in ms at a steady `rate` events/s into `subscribers` on one session. */
export async function latency(target: Target, subscribers: number, rate: number, seconds: number): Promise<{ p50: number; p99: number; samples: number }> {
  const session = `lat-${randomUUID().slice(0, 8)}`;
  const samples: number[] = [];
  let recording = false;
  const subs = await subscribeAll(target, Array.from({ length: subscribers }, () => session), (frame) => {
    if (!recording) return;
    const parsed = Buffer.isBuffer(frame) ? (JSON.parse(frame.toString()) as { result: { data: { t: number } } }) : frame;
    samples.push(performance.timeOrigin + performance.now() - parsed.result.data.t);
  });
  const run = async (ms: number) => {
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < ms) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      for (; sent < due; sent++) void post(target, session, eventBody(sent));
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
  return { p50: at(0.5), p99: at(0.99), samples: samples.length };
}

