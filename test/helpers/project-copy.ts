/**
 * A copy of the project as a fresh clone has it (sources, scripts, manifests; no dist/), in a
 * temporary folder with the repository's node_modules linked in, so that packing or building it
 * never touches this work tree's dist/ while other test files run.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const run = promisify(execFile);

const CLONE = ['bin', 'src', 'scripts', 'schemas', 'docs', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'LICENSE', 'README.md'];

export function projectCopy(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'horologium-copy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const project = join(dir, 'horologium');
  for (const entry of CLONE) cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  return project;
}

/** A copy built as `npm run build` builds it; returns the copy's folder (dist/ inside it). */
export async function builtCopy(t: Test): Promise<string> {
  const project = projectCopy(t);
  await run('npm', ['run', 'build', '--silent'], { cwd: project });
  return project;
}
