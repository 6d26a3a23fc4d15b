/** Writes schemas/*.json from the zod sources. Usage: npm run schemas */
import { mkdirSync, writeFileSync } from 'node:fs';
import { asyncApiDocument } from '../src/wire/asyncapi.js';
import { jsonSchemas, openApiDocument } from '../src/wire/openapi.js';

const dir = new URL('../schemas/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(jsonSchemas())) {
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(schema, null, 2)}\n`);
}
writeFileSync(new URL('openapi.json', dir), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
writeFileSync(new URL('asyncapi.json', dir), `${JSON.stringify(asyncApiDocument(), null, 2)}\n`);
console.log(`wrote ${Object.keys(jsonSchemas()).length + 2} files to schemas/`);
