/**
 * The HTTP side the fan-out peers share (bench/bare-ws.ts, bench/socketio-server.ts): the same
 * `POST /v1/sessions/{s}/events` a producer sends Horologium, turned into the same status frame,
 * handed to the peer's broadcast. No store: the peers are the "home-made" alternatives.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface StatusEvent {
  session: string;
  seq: number;
  type: string;
  /** The frame text, built once per event as Horologium builds it. */
  frame: string;
  result: { type: string; data: unknown; timestamp: number; uuid: string; session: string; seq: number };
}

const ROUTE = /^\/v1\/sessions\/([^/]+)\/events$/;

export function peerHttpServer(broadcast: (event: StatusEvent) => void): Server {
  const seqs = new Map<string, number>();
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    const match = req.method === 'POST' ? ROUTE.exec(req.url ?? '') : null;
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const session = decodeURIComponent(match[1] as string);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: unknown };
      const seq = (seqs.get(session) ?? 0) + 1;
      seqs.set(session, seq);
      const result = { type: body.type, data: body.data, timestamp: Date.now() / 1000, uuid: randomUUID(), session, seq };
      broadcast({ session, seq, type: body.type, frame: JSON.stringify({ method: 'status', result }), result });
      res.writeHead(202, { 'content-type': 'application/json' }).end(`{"event_seq":${seq}}`);
    });
  });
}
