/**
 * The producer SDK's cost to its caller: client CPU (this process, all threads) per tool-results
 * post through `Producer.toolResult` against plain `fetch` posting the same body, to the same bare
 * Fastify route (bench/bare-route.ts, so the server's share is the same for both and small), in
 * alternating rounds. The last line is the ratio of the medians (SDK / plain fetch).
 *
 *   npx tsx bench/producer-overhead.ts -- --requests 4000 --rounds 5 --concurrency 16 --kib 2
 */
import { Producer, rawJson } from '../src/producer/index.js';
import { startChild, stopChild } from './children.js';
import { median, numberOption } from './options.js';
import { freePort } from '../test/helpers/process.js';

const requests = numberOption('requests', 4000);
const rounds = numberOption('rounds', 5);
const concurrency = numberOption('concurrency', 16);
const kib = numberOption('kib', 2);

const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const server = await startChild(['--import', 'tsx', 'bench/bare-route.ts'], {}, port);
const resultText = JSON.stringify({ content: 'x'.repeat(kib * 1024 - 16) });
const producer = new Producer({ url });

type Poster = (n: number) => Promise<unknown>;

const viaFetch: Poster = async (n) => {
  const body = `{"call_id":"c${n}","name":"grep","result":${resultText}}`;
  const res = await fetch(`${url}/v1/sessions/bench/tool-results`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return res.json();
};
const viaProducer: Poster = (n) => producer.toolResult('bench', { call_id: `c${n}`, name: 'grep', result: rawJson(resultText) });

/** Client CPU µs per request over `requests` posts, `concurrency` in flight. */
async function measure(post: Poster): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) await post(next++);
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / requests;
}


await measure(viaFetch);
await measure(viaProducer);
const plain: number[] = [];
const sdk: number[] = [];
for (let r = 0; r < rounds; r++) {
  // Which goes first alternates, so that neither always pays for the other's garbage.
  if (r % 2 === 0) {
    plain.push(await measure(viaFetch));
    sdk.push(await measure(viaProducer));
  } else {
    sdk.push(await measure(viaProducer));
    plain.push(await measure(viaFetch));
  }
  console.log(`round ${r + 1}: fetch ${plain.at(-1)!.toFixed(1)} µs/request, Producer ${sdk.at(-1)!.toFixed(1)} µs/request`);
}
await stopChild(server);
console.log(`${requests} requests x ${rounds} rounds, ${concurrency} in flight, ${kib} KiB results`);
console.log(`median client CPU: fetch ${median(plain).toFixed(1)} µs, Producer ${median(sdk).toFixed(1)} µs per request`);
console.log(`ratio (Producer / fetch): ${(median(sdk) / median(plain)).toFixed(2)}x`);
