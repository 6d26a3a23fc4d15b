/** A real `ws` client of the stream for tests: every frame kept, awaited by predicate. */
import WebSocket from 'ws';

export interface Client {
  ws: WebSocket;
  frames: any[];
  texts: string[];
  next(pred?: (f: any) => boolean, ms?: number): Promise<any>;
  closed: Promise<{ code: number }>;
}

export async function connect(srv: { url: string }, query = '', headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/v1/stream${query}`, { headers });
  const frames: any[] = [];
  const texts: string[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    const text = data.toString();
    texts.push(text);
    if (text !== '💓') frames.push(JSON.parse(text));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let read = 0;
  return {
    ws,
    frames,
    texts,
    closed,
    async next(pred = () => true, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        while (read < frames.length) {
          const f = frames[read++];
          if (pred(f)) return f;
        }
        if (Date.now() > deadline) throw new Error(`no frame in ${ms} ms; got ${JSON.stringify(frames).slice(0, 500)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
  };
}


/** The HTTP status with which an upgrade was refused before the handshake, or "open". */
export function upgradeOutcome(srv: { url: string }, query = '', headers: Record<string, string> = {}): Promise<number | 'open'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/v1/stream${query}`, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      resolve('open');
      ws.close();
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(String(err))) reject(err);
    });
  });
}
