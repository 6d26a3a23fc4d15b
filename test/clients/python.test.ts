/**
 * The Python client (clients/python) runs its own suite, `python3 -m unittest`, against real
 * servers it starts itself (`node --import tsx src/server.ts`, as `npm start` would) and a scripted
 * stub for the failures a real server cannot produce on demand. Each Python test is reported here
 * as one assertion. Where python3 is missing the suite skips with a message, except under CI=true,
 * where it fails: .ci/run installs Debian's python3.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const PYTHON = process.env.PYTHON ?? 'python3';
const CLIENT = fileURLToPath(new URL('../../clients/python/', import.meta.url));

function pythonVersion(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

t.test('the Python client passes its unittest suite against a real server', async (t) => {
  const version = pythonVersion();
  if (version === undefined) {
    if (process.env.CI === 'true') t.fail(`${PYTHON} not found: the Python client's tests must run in CI`);
    else t.comment(`SKIP: ${PYTHON} not found; the Python client's tests did not run`);
    return;
  }
  const [major, minor] = version.split('.').map(Number) as [number, number];
  t.ok(major === 3 && minor >= 9, `Python ${version} (the client supports 3.9 and later)`);
  const child = spawn(PYTHON, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], { cwd: CLIENT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  // unittest -v writes one line per test: "test_x (module.Class.test_x) ... ok" (or FAIL / ERROR).
  const results = [...output.matchAll(/^(test_\w+) \(([\w.]+)\)[^\n]*? \.\.\. (ok|FAIL|ERROR|skipped.*)$/gm)];
  t.ok(results.length >= 20, `${results.length} Python tests reported`);
  for (const [, , where, status] of results) t.equal(status, 'ok', where);
  t.equal(code, 0, code === 0 ? 'python3 -m unittest passed' : `python3 -m unittest failed:\n${output.slice(-4000)}`);
});
