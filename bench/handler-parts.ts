/**
 * bench/handler-parts: per-request cost of the ingest handler's own JSON work, in microseconds, on
 * 20,000 bodies of 2 KiB, with JSON.parse as the baseline. Usage: npx tsx bench/handler-parts.ts
 */
import { parseJson, member } from '../src/json/lossless.js';
import { decodeUtf8 } from '../src/json/utf8.js';
import { shallowView } from '../src/json/shallow.js';
import { toolResultBodySchema as toolResultBody } from '../src/wire/schemas.js';
import { previewJson } from '../src/preview/preview.js';
import { createHash, randomUUID } from 'node:crypto';
const bodies = Array.from({length: 20000}, (_, k) => Buffer.from(`{"call_id":"c${k}","name":"grep","result":${JSON.stringify({content:'x'.repeat(1900), n:k, path:'src/app.ts'})}}`));
const time = (label: string, f: (b: Buffer, k: number) => unknown) => { const t0 = performance.now(); for (let k = 0; k < bodies.length; k++) f(bodies[k]!, k); console.log(label, ((performance.now()-t0)*1000/bodies.length).toFixed(2), 'µs'); };
for (let r = 0; r < 2; r++) {
time('JSON.parse', (b) => JSON.parse(b.toString()));
time('decode+parseJson', (b) => parseJson(decodeUtf8(b)));
const docs = bodies.map((b) => parseJson(decodeUtf8(b)));
time('shallow+zod', (_b, k) => toolResultBody.safeParse(shallowView(docs[k]!, docs[k]!.root as any)));
time('preview', (_b, k) => { const d = docs[k]!; previewJson(d, member(d.root as any, 'result')!, 'grep', { limit: 4000, passthroughTools: new Set(['read_file']) }); });
time('sha256', (_b, k) => createHash('sha256').update(docs[k]!.text).digest('base64url'));
time('uuid+iso', () => { randomUUID(); new Date().toISOString(); });
}
