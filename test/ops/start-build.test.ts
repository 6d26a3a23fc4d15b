/**
 * `npm start` builds dist/ only when a source is newer than the last build (issue 29, part 7):
 * scripts/build-if-stale.mjs, on a copy of the project as a fresh clone has it.
 */
import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { builtCopy, projectCopy, run } from '../helpers/project-copy.js';

const prestart = (cwd: string) => run(process.execPath, ['scripts/build-if-stale.mjs'], { cwd, timeout: 120_000 });

t.test('a fresh clone builds on its first start, not on the next; a changed source builds again', async (t) => {
  const project = projectCopy(t);
  const first = await prestart(project);
  t.match(first.stderr, /building dist\/ \(first start\)/);
  t.ok(existsSync(join(project, 'dist/server.js')), 'the server is built');
  t.ok(existsSync(join(project, 'dist/store/lua/append.lua')), 'with its assets');
  t.ok(existsSync(join(project, 'dist/panel/index.html')), 'and the panel');

  const second = await prestart(project);
  t.equal(second.stderr, '', 'nothing newer than the build: no build');

  const later = new Date(Date.now() + 5_000);
  utimesSync(join(project, 'src/app.ts'), later, later);
  const third = await prestart(project);
  t.match(third.stderr, /sources changed since the last build: building dist\//);
  t.equal((await prestart(project)).stderr, '', 'and then not again');
});

t.test('after npm run build (the README, CI, the Dockerfile), the first start does not build again', async (t) => {
  const project = await builtCopy(t);
  t.ok(existsSync(join(project, 'dist/.build-stamp')), 'npm run build leaves the stamp');
  const start = await prestart(project);
  t.equal(start.stderr, '', 'the first start finds the build current: no build');
});

t.test('the horologium bin in a fresh clone builds once, saying so on stderr, then runs (npx horologium after npm ci)', async (t) => {
  const project = projectCopy(t);
  const first = await run(process.execPath, ['bin/horologium.js', '--help'], { cwd: project, timeout: 120_000 });
  t.match(first.stderr, /^horologium: building dist\/ \(first start\)$/m, 'the build is announced on stderr');
  t.match(first.stdout, /^Usage: horologium \[options\] \[command\]/, 'stdout holds only the help');
  const second = await run(process.execPath, ['bin/horologium.js', '--help'], { cwd: project, timeout: 30_000 });
  t.equal(second.stderr, '', 'built: no build the second time');
  t.match(second.stdout, /^Usage: horologium/);
});
