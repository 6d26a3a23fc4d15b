/**
 * Bundles the page into dist/ (app.js beside index.html). `buildExample(outDir)` is what the tests
 * call; run directly, it builds into ./dist.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

export async function buildExample(outDir = join(here, 'dist')) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(here, 'src/main.tsx')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    outfile: join(outDir, 'app.js'),
    logLevel: 'warning',
  });
  copyFileSync(join(here, 'index.html'), join(outDir, 'index.html'));
  return outDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildExample();
