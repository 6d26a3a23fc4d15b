/**
 * Nothing stray at the repository's root (issue 44, part 9): a scratch script or a stray folder
 * committed at the top fails here. The list is short on purpose; a new top-level entry is a
 * decision, made by adding it here.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ALLOWED = new Set([
  '.ci', '.dockerignore', '.gitignore', '.redocly.lint-ignore.yaml',
  'BENCHMARKS.md', 'CHANGELOG.md', 'Dockerfile', 'LICENSE', 'README.md', 'SECURITY.md',
  'bench', 'bin', 'clients', 'deploy', 'docker-compose.yml', 'docs', 'examples',
  'package-lock.json', 'package.json', 'schemas', 'scripts', 'sdk', 'src', 'test',
  'tsconfig.build.json', 'tsconfig.json',
]);

t.test('the root holds only the allowed files and folders', async (t) => {
  // What is committed: a working tree may hold anything of its own (a symlinked node_modules, say).
  const listed = spawnSync('git', ['ls-files', '--cached'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  if (listed.status !== 0) {
    // A copy without .git (an unpacked tarball) has no list of committed files to check.
    if (process.env.CI === 'true') t.fail(`git ls-files failed: ${listed.stderr.trim() || listed.error?.message}`);
    else t.comment(`not a git checkout (${listed.stderr.trim() || listed.error?.message}): skipped`);
    return;
  }
  const top = new Set(listed.stdout.split('\n').filter(Boolean).map((path) => path.split('/')[0]!));
  const stray = [...top].filter((name) => !ALLOWED.has(name)).sort();
  t.same(stray, [], `files or folders outside the allow-list at the root: ${stray.join(', ')}`);
});
