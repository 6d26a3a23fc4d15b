/**
 * bench/ag-ui-snapshot: joining a 10,000-event session over AG-UI (docs/protocol.md section 11), with
 * every event replayed (the default) against one MESSAGES_SNAPSHOT (`forwardedProps.snapshot`).
 * For each way, alternating which goes first: the bytes on the wire until the reader has caught up
 * (a raw reader, up to the id of the session's last event), the time until then, and the time until
 * @ag-ui/client's HttpAgent has built every message (what a CopilotKit panel waits for).
 *
 * Usage: npm run build && npx tsx bench/ag-ui-snapshot.ts [-- --calls 5000 --rounds 3]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { startChild, stopChild } from './children.js';
import { median, numberOption } from './options.js';

const CALLS = numberOption('calls', 5000);
const ROUNDS = numberOption('rounds', 3);
const PORT = 18_931;
const URL_ = `http://127.0.0.1:${PORT}`;
const SESSION = 'long-session';
const dir = mkdtempSync(join(tmpdir(), 'horologium-snap-'));

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${URL_}/v1/sessions/${SESSION}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 202) throw new Error(`${path}: ${res.status}`);
};

const input = (snapshot: boolean) => ({
  threadId: SESSION,
  runId: randomUUID(),
  messages: [],
  tools: [],
  context: [],
  state: {},
  forwardedProps: snapshot ? { snapshot: true } : {},
});

/** Bytes and milliseconds until the whole record of the session's last event has arrived (the id line, then its data). */
async function rawCatchUp(snapshot: boolean, lastId: string): Promise<{ bytes: number; ms: number }> {
  const abort = new AbortController();
  const started = performance.now();
  const res = await fetch(`${URL_}/v1/ag-ui`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input(snapshot)), signal: abort.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let bytes = 0;
  let tail = '';
  // Once the id line is seen, what follows it until the record's end (a blank line).
  let after: string | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended');
    bytes += value.length;
    const text = decoder.decode(value, { stream: true });
    if (after === undefined) {
      // The id line may be split across chunks: the end of the last chunk is kept with the next.
      const joined = tail + text;
      const at = joined.indexOf(`id: ${lastId}\n`);
      if (at >= 0) after = joined.slice(at);
      else tail = joined.slice(-256);
    } else {
      after += text;
    }
    if (after !== undefined && after.includes('\n\n')) break;
  }
  const ms = performance.now() - started;
  abort.abort();
  return { bytes, ms };
}

/** Milliseconds until HttpAgent holds every message of the session. */
async function agentCatchUp(snapshot: boolean, messages: number): Promise<number> {
  const agent = new HttpAgent({ url: `${URL_}/v1/ag-ui`, threadId: SESSION });
  const started = performance.now();
  return new Promise<number>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error('HttpAgent did not catch up in 300 s')), 300_000);
    agent
      .runAgent(
        { runId: randomUUID(), forwardedProps: snapshot ? { snapshot: true } : {} },
        {
          onMessagesChanged: ({ messages: now }) => {
            if (now.length < messages) return;
            clearTimeout(deadline);
            resolve(performance.now() - started);
            agent.abortRun();
          },
        },
      )
      .catch(() => undefined);
  });
}

const child = await startChild(
  ['dist/server.js'],
  { HOROLOGIUM_STORE: `sqlite:${join(dir, 'snap.db')}`, LOG_LEVEL: 'warn', HOROLOGIUM_HISTORY_SIZE: String(2 * CALLS), HOROLOGIUM_RATE_LIMIT: '0' },
  PORT,
);
try {
  for (let k = 0; k < CALLS; k += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, CALLS - k) }, async (_, j) => {
        const id = `c${k + j}`;
        await post('tool-calls', { call_id: id, name: 'read_file', args: { path: `src/module${k + j}.ts`, q: 'TODO' } });
        await post('tool-results', { call_id: id, name: 'read_file', result: { content: `line ${k + j}: ${'x'.repeat(180)}` } });
      }),
    );
  }
  const log = (await (await fetch(`${URL_}/v1/sessions/${SESSION}/events?limit=1&after=${2 * CALLS - 1}`)).json()) as { epoch: string; head: number; oldest: number };
  if (log.head !== 2 * CALLS || log.oldest !== 1) throw new Error(`expected ${2 * CALLS} retained events, got head ${log.head}, oldest ${log.oldest}`);
  const lastId = `${log.epoch}:${log.head}`;
  const results = { events: { bytes: [] as number[], ms: [] as number[], agentMs: [] as number[] }, snapshot: { bytes: [] as number[], ms: [] as number[], agentMs: [] as number[] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of round % 2 === 0 ? (['events', 'snapshot'] as const) : (['snapshot', 'events'] as const)) {
      const raw = await rawCatchUp(way === 'snapshot', lastId);
      results[way].bytes.push(raw.bytes);
      results[way].ms.push(raw.ms);
      results[way].agentMs.push(await agentCatchUp(way === 'snapshot', 2 * CALLS));
    }
  }
  console.log(`AG-UI catch-up of one session of ${2 * CALLS} events (${CALLS} calls, each a tool-calls and a tool-results), median of ${ROUNDS} rounds:`);
  console.log('| way | bytes until caught up | ms until the last event (raw reader) | ms until HttpAgent holds every message |');
  console.log('|---|---|---|---|');
  for (const way of ['events', 'snapshot'] as const) {
    const r = results[way];
    console.log(`| ${way === 'events' ? 'every event (default)' : 'MESSAGES_SNAPSHOT'} | ${median(r.bytes).toLocaleString('en')} | ${median(r.ms).toFixed(0)} | ${median(r.agentMs).toFixed(0)} |`);
  }
  console.log(`ratio snapshot/events: bytes ${(median(results.snapshot.bytes) / median(results.events.bytes)).toFixed(2)}x, raw time ${(median(results.snapshot.ms) / median(results.events.ms)).toFixed(2)}x, HttpAgent time ${(median(results.snapshot.agentMs) / median(results.events.agentMs)).toFixed(2)}x`);
} finally {
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });
}
