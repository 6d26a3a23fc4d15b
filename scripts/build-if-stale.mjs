// `npm start`'s first step (scripts/start.mjs), and the CLI's in a clone (bin/horologium.js): builds dist/ only when a source is newer than the last build, so a
// start after the first takes well under a second (issue 29, part 7). The build's inputs are src/
// (the panel included), the build scripts, package.json and the tsconfig files; every successful
// `npm run build` leaves dist/.build-stamp (scripts/stamp-build.mjs), whose time is the build's.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');
const INPUTS = ['src', 'scripts/copy-assets.mjs', 'scripts/build-panel.mjs', 'scripts/stamp-build.mjs', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `path` (a file or a folder), in ms. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changedAt = Math.max(...INPUTS.map((p) => join(root, p)).filter(existsSync).map(newest));
if (changedAt > builtAt) {
  console.error(builtAt === 0 ? 'horologium: building dist/ (first start)' : 'horologium: sources changed since the last build: building dist/');
  // The build's output goes to stderr: the CLI's stdout (bin/horologium.js) may be read by a program.
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
