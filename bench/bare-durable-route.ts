/**
 * The floor of a durable write (bench/durable-write.ts): a Fastify route that parses the body as
 * the bare route does, then inserts the result text and a ~2 KiB event row with better-sqlite3
 * (WAL, synchronous=FULL, so a 202 means on disk), one transaction per event-loop turn for every
 * request that arrived in it, and replies 202 after the commit. No idempotency, no preview, no
 * thread, no stream: what any durable design on these disks must pay at least.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify, { type FastifyReply } from 'fastify';

const db = new Database(join(mkdtempSync(join(tmpdir(), 'horologium-floor-')), 'floor.db'));
db.pragma('page_size = 16384');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`
  CREATE TABLE results (session TEXT NOT NULL, seq INTEGER NOT NULL, call_id TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (session, seq));
  CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, frame TEXT NOT NULL, PRIMARY KEY (session, seq));
`);
const insertResult = db.prepare('INSERT INTO results (session, seq, call_id, result) VALUES (?, ?, ?, ?)');
const insertEvent = db.prepare('INSERT INTO events (session, seq, frame) VALUES (?, ?, ?)');

interface Pending {
  session: string;
  callId: string;
  result: string;
  reply: FastifyReply;
}
let pending: Pending[] = [];
const seqs = new Map<string, number>();

const commit = db.transaction((batch: Pending[]) => {
  for (const p of batch) {
    const seq = (seqs.get(p.session) ?? 0) + 1;
    seqs.set(p.session, seq);
    insertResult.run(p.session, seq, p.callId, p.result);
    const frame = `{"method":"status","result":{"type":"tool_completed","data":{"name":"grep","call_id":${JSON.stringify(p.callId)},"result":${p.result.slice(0, 4000)}},"session":${JSON.stringify(p.session)},"seq":${seq}}}`;
    insertEvent.run(p.session, seq, frame);
  }
});

function flush(): void {
  const batch = pending;
  pending = [];
  commit(batch);
  for (const p of batch) p.reply.code(202).send({ call_id: p.callId, queue_seq: 1, event_seq: 1, duplicate: false });
}

const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/v1/sessions/:session/tool-results', (request, reply) => {
  const body = request.body as { call_id: string; result: unknown };
  if (pending.length === 0) setImmediate(flush);
  pending.push({ session: (request.params as { session: string }).session, callId: body.call_id, result: JSON.stringify(body.result), reply });
  return reply;
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
