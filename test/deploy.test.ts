/**
 * No Docker engine runs here, so the image's start command and the compose file are checked
 * statically, and the start command itself is run: the built server starts and answers.
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';

const root = new URL('../', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, root), 'utf8');

t.test('Dockerfile runs the built server directly', async (t) => {
  const docker = read('Dockerfile');
  t.match(docker, /CMD \["node", "dist\/server\.js"\]/);
  t.match(docker, /npm ci/);
  t.match(docker, /npm run build/);
  t.match(docker, /HOROLOGIUM_STORE=sqlite:\/data\/horologium\.db/);
  const pkg = JSON.parse(read('package.json'));
  t.equal(pkg.main, 'dist/server.js', 'the build emits what CMD runs');
  t.match(read('tsconfig.build.json'), /"rootDir": "src"/, 'src/server.ts → dist/server.js');
  t.ok(existsSync(new URL('package-lock.json', root)), 'npm ci needs the lock file');
});

t.test('compose: the service, its env and its volume', async (t) => {
  const compose = read('docker-compose.yml');
  t.match(compose, /services:\n\s+horologium:/);
  t.match(compose, /HOST: 0\.0\.0\.0/);
  t.match(compose, /HOROLOGIUM_STORE: sqlite:\/data\/horologium\.db/);
  t.match(compose, /horologium-data:\/data/);
  t.match(compose, /stop_signal: SIGTERM/);
});
