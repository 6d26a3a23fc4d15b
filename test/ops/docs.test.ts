/**
 * The repository stands alone: its protocol document names every code the server sends, and
 * nothing shipped (code, README, the OpenAPI document) points outside the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CLOSE_CODES, ERRORS } from '../../src/common/errors.js';
import { openApiDocument } from '../../src/wire/openapi.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const protocol = readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8');

t.test('docs/protocol.md lists every error code with its status, and every close code with its rule', async (t) => {
  for (const [code, entry] of Object.entries(ERRORS)) {
    const status = 'status' in entry ? String(entry.status) : '—';
    t.match(protocol, new RegExp(`\\| \`${code}\` \\| ${status} \\|`), `${code} (${status})`);
  }
  for (const [name, close] of Object.entries(CLOSE_CODES)) {
    t.match(protocol, new RegExp(`\\| \`${close.code}\` \\| ${name} \\| \`${close.reconnect}\` \\|`), `${close.code} ${name}`);
  }
});

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

t.test('nothing shipped names a file outside the repository', async (t) => {
  const outside = /CONTRACT\.md|\.\.\/shared|shared folder/;
  const shipped = [...files(join(ROOT, 'src')), join(ROOT, 'README.md'), join(ROOT, 'docs/protocol.md')];
  const hits = shipped.filter((path) => outside.test(readFileSync(path, 'utf8')));
  t.same(hits, [], 'src/, README.md and docs/protocol.md');
  t.notMatch(JSON.stringify(openApiDocument()), outside, '/openapi.json');
  t.match(JSON.stringify(openApiDocument()), /docs\/protocol\.md/, '/openapi.json points to the protocol document');
});

t.test('every relative link of the README, docs/ and examples/README.md leads to a file of the repository', async (t) => {
  const pages = [join(ROOT, 'README.md'), join(ROOT, 'BENCHMARKS.md'), join(ROOT, 'examples/README.md'), ...[...files(join(ROOT, 'docs'))].filter((p) => p.endsWith('.md'))];
  let links = 0;
  for (const page of pages) {
    for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target as string)) continue;
      links++;
      const path = join(page, '..', (target as string).split('#')[0] as string);
      t.ok(existsSync(path), `${page.slice(ROOT.length)} → ${target}`);
    }
  }
  t.ok(links > 20, `${links} links checked`);
});
