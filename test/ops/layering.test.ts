/**
 * The one-way flow of src/ (docs/development.md): a module imports only from its own layer or from a
 * layer below it. Every import of every file under src/ is read and checked; an upward import fails
 * with the file and the import in the message.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { importSpecifiers } from '../helpers/imports.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Bottom to top. A module's layer is its folder under src/, or its file name at the top level. */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['common'],
  ['json'],
  ['preview'],
  ['wire'],
  ['sdk-common'],
  ['auth', 'client', 'producer'],
  ['sdk', 'integrations'],
  ['panel'],
  ['config'],
  ['store'],
  ['telemetry'],
  ['stream'],
  ['app-context.ts'],
  ['http'],
  ['routes'],
  ['app.ts'],
  ['run-server.ts'],
  ['server.ts', 'index.ts', 'cli'],
];

function layerOf(fileInSrc: string): number {
  const top = fileInSrc.split('/')[0] as string;
  const rank = LAYERS.findIndex((layer) => layer.includes(top));
  if (rank < 0) throw new Error(`src/${fileInSrc} is in no layer: add ${top} to LAYERS in test/ops/layering.test.ts`);
  return rank;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** The upward imports of one file's text, as messages. */
export function upwardImports(fileInSrc: string, text: string): string[] {
  const own = layerOf(fileInSrc);
  const problems: string[] = [];
  for (const spec of importSpecifiers(text)) {
    if (!spec.startsWith('.')) continue;
    const target = relative(SRC, resolve(SRC, dirname(fileInSrc), spec)).replace(/\.js$/, '.ts');
    if (target.startsWith('..')) {
      problems.push(`src/${fileInSrc} imports ${spec}, outside src/`);
      continue;
    }
    const theirs = layerOf(target);
    if (theirs > own) problems.push(`src/${fileInSrc} imports ${spec} (layer ${LAYERS[theirs]?.join('/')}) from below it (layer ${LAYERS[own]?.join('/')})`);
  }
  return problems;
}

t.test('every import of src/ runs down the layers', async (t) => {
  const problems: string[] = [];
  let files = 0;
  for (const path of sourceFiles(SRC)) {
    files++;
    problems.push(...upwardImports(relative(SRC, path), readFileSync(path, 'utf8')));
  }
  t.ok(files > 40, `${files} files read`);
  t.same(problems, [], problems.join('\n'));
});

t.test('the check fails on an upward import', async (t) => {
  t.same(upwardImports('store/ledger.ts', "import { Hub } from '../stream/hub.js';\n"), [
    'src/store/ledger.ts imports ../stream/hub.js (layer stream) from below it (layer store)',
  ]);
  t.same(upwardImports('wire/frames.ts', "import type { Store } from '../store/types.js';"), [
    'src/wire/frames.ts imports ../store/types.js (layer store) from below it (layer wire)',
  ]);
  t.same(upwardImports('stream/hub.ts', "import type { Store } from '../store/types.js';\nimport { x } from './connection.js';"), [], 'down and sideways are fine');
  t.same(upwardImports('client/index.ts', "const m = await import('../app.js');"), [
    'src/client/index.ts imports ../app.js (layer app.ts) from below it (layer auth/client/producer)',
  ]);
});
