/** schemas/ must be exactly what the zod sources generate (run `npm run schemas` after a change). */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { asyncApiDocument } from '../../src/wire/asyncapi.js';
import { jsonSchemas, openApiDocument } from '../../src/wire/openapi.js';

const dir = new URL('../../schemas/', import.meta.url);

t.test('committed schemas match the zod sources', async (t) => {
  const generated: Record<string, unknown> = { ...jsonSchemas(), openapi: openApiDocument(), asyncapi: asyncApiDocument() };
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
  t.same(files.sort(), Object.keys(generated).sort(), 'one file per published schema, no stale ones');
  for (const [name, schema] of Object.entries(generated)) {
    t.equal(readFileSync(new URL(`${name}.json`, dir), 'utf8'), `${JSON.stringify(schema, null, 2)}\n`, `${name}.json is up to date`);
  }
});

t.test('the schemas describe the contract', async (t) => {
  const s = jsonSchemas();
  t.same((s['tool-result-body'] as any).required, ['call_id', 'name', 'result']);
  t.same((s['status-frame'] as any).properties.result.required, ['type', 'data', 'timestamp', 'uuid', 'session', 'seq']);
  t.same((s['error-reply'] as any).properties.error.required, ['code', 'message', 'details']);
});
