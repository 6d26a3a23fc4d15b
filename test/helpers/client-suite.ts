/**
 * Runs another language's client test suite (clients/python, clients/ruby) as a child process and
 * reports each of its tests as one assertion. The suites start their own real servers. Where the
 * language's binary is missing the suite skips with a message, except under CI=true, where it
 * fails: .ci/run installs Debian's python3 and ruby.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { Test } from 'tap';

export interface ClientSuite {
  /** The binary, e.g. python3. */
  binary: string;
  /** Prints the language's version as "major.minor". */
  versionArgs: string[];
  /** The oldest version the client supports. */
  minimum: [number, number];
  cwd: string;
  args: string[];
  /** One match per test: [, name, passed] where passed is the runner's success mark. */
  result: RegExp;
  passed: (mark: string) => boolean;
  atLeast: number;
}

export async function runClientSuite(t: Test, suite: ClientSuite): Promise<void> {
  const probe = spawnSync(suite.binary, suite.versionArgs, { encoding: 'utf8' });
  if (probe.status !== 0) {
    if (process.env.CI === 'true') t.fail(`${suite.binary} not found: this client's tests must run in CI`);
    else t.comment(`SKIP: ${suite.binary} not found; this client's tests did not run`);
    return;
  }
  const version = probe.stdout.trim();
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const [minMajor, minMinor] = suite.minimum;
  t.ok(major > minMajor || (major === minMajor && minor >= minMinor), `${suite.binary} ${version} (the client supports ${minMajor}.${minMinor} and later)`);
  const child = spawn(suite.binary, suite.args, { cwd: suite.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  const results = [...output.matchAll(suite.result)];
  t.ok(results.length >= suite.atLeast, `${results.length} tests reported`);
  for (const [, name, mark] of results) t.ok(suite.passed(mark as string), name as string);
  t.equal(code, 0, code === 0 ? `${suite.binary}'s test run passed` : `${suite.binary}'s test run failed:\n${output.slice(-4000)}`);
}
