// The panel's build: src/panel/main.ts bundled by esbuild into one browser module (the project's
// client included, no CDN, nothing fetched at run time), beside the page and its stylesheet.
// `npm run build` writes it to dist/panel/, where the server serves it from; tests build a copy
// into a directory of their own with buildPanel(dir).
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const source = new URL('../src/panel/', import.meta.url);

export async function buildPanel(outDir) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [fileURLToPath(new URL('main.ts', source))],
    outfile: `${outDir}/app.js`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const file of ['index.html', 'panel.css', 'favicon.svg']) copyFileSync(new URL(file, source), `${outDir}/${file}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildPanel(process.argv[2] ?? fileURLToPath(new URL('../dist/panel', import.meta.url)));
}
