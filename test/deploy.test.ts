/**
 * No Docker engine runs here, so the image's start command and the compose file are checked
 * statically, and the start command itself is run: the built server starts and answers.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { loadConfig } from '../src/config.js';

const root = new URL('../', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, root), 'utf8');

t.test('Dockerfile runs the built server directly', async (t) => {
  const docker = read('Dockerfile');
  t.match(docker, /CMD \["node", "dist\/server\.js"\]/);
  t.match(docker, /npm ci/);
  t.match(docker, /npm run build/);
  t.match(docker, /HOROLOGIUM_STORE=sqlite:\/data\/horologium\.db/);
  const pkg = JSON.parse(read('package.json'));
  t.ok(existsSync(new URL('src/server.ts', root)), 'the build emits dist/server.js, what CMD runs');
  t.not(pkg.main, 'dist/server.js', 'importing the package is not starting the server');
  t.match(read('tsconfig.build.json'), /"rootDir": "src"/, 'src/server.ts → dist/server.js');
  t.ok(existsSync(new URL('package-lock.json', root)), 'npm ci needs the lock file');
});

t.test('the build carries every file the server reads at run time, in the image too', async (t) => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  const copied = [...read('scripts/copy-assets.mjs').matchAll(/'([a-z/]+)'/g)].map((m) => m[1] as string).filter((d) => d.includes('/') || d === 'store');
  const assets: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(new URL(`src/${dir}`, root), { withFileTypes: true })) {
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (!e.name.endsWith('.ts')) assets.push(rel);
    }
  };
  walk('');
  t.ok(assets.length > 0, `${assets.length} files beside the TypeScript (the Lua scripts)`);
  // The panel's page and stylesheet go to dist/panel/ with its bundle (scripts/build-panel.mjs);
  // its tsconfig.json is the type check's, not read at run time.
  const panelFiles = [...read('scripts/build-panel.mjs').matchAll(/'([a-z-]+\.(?:html|css))'/g)].map((m) => `panel/${m[1]}`);
  for (const asset of assets) {
    if (asset === 'panel/tsconfig.json') continue;
    if (asset.startsWith('panel/')) t.ok(panelFiles.includes(asset), `src/${asset} is copied to dist/panel/ by scripts/build-panel.mjs`);
    else t.ok(copied.some((d) => asset.startsWith(`${d}/`)), `src/${asset} is copied to dist/ by scripts/copy-assets.mjs`);
  }
  const docker = read('Dockerfile');
  for (const m of pkg.scripts.build!.matchAll(/node (\S+)/g)) t.match(docker, new RegExp(`COPY ${m[1]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `), `the image's build stage has ${m[1]}`);
});

/** A compose service's environment with `${VAR:-default}` taken at its default, as a fresh shell would. */
function composeEnv(env: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
}

t.test('compose: Redis with AOF and a healthcheck, two instances on it, a load balancer', async (t) => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const s = compose.services;
  t.same(Object.keys(s).sort(), ['horologium', 'horologium-a', 'horologium-b', 'lb', 'redis']);
  t.same(s.redis.command, ['redis-server', '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], 'AOF, fsync on every write');
  t.same(s.redis.healthcheck.test, ['CMD', 'redis-cli', 'ping']);
  t.match(s.redis.volumes, ['redis-data:/data']);
  for (const name of ['horologium-a', 'horologium-b']) {
    const svc = s[name];
    t.equal(svc.build, '.');
    t.same(svc.depends_on, { redis: { condition: 'service_healthy' } }, `${name} waits for a healthy Redis`);
    t.equal(svc.stop_signal, 'SIGTERM');
    const config = loadConfig(composeEnv(svc.environment));
    t.equal(config.store, 'redis://redis:6379', `${name}: the env is a valid configuration on Redis`);
    t.equal(config.host, '0.0.0.0');
    t.same(config.trustProxy, ['uniquelocal'], 'the client address comes from the load balancer');
  }
  t.same(s.lb.volumes, ['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro']);
  t.same(s.lb.ports, ['127.0.0.1:8080:8080']);
  const single = s.horologium;
  t.same(single.profiles, ['single'], 'the SQLite instance starts only when named');
  t.equal(loadConfig(composeEnv(single.environment)).store, 'sqlite:/data/horologium.db');
  t.match(single.volumes, ['horologium-data:/data']);
});

t.test('the load balancer forwards WebSocket upgrades to both instances', async (t) => {
  const nginx = read('deploy/nginx.conf');
  t.match(nginx, /upstream horologium \{\s*server horologium-a:8080;\s*server horologium-b:8080;\s*\}/);
  t.match(nginx, /proxy_http_version 1\.1;/);
  t.match(nginx, /proxy_set_header Upgrade \$http_upgrade;/);
  t.match(nginx, /proxy_set_header Connection \$connection_upgrade;/);
  t.match(nginx, /map \$http_upgrade \$connection_upgrade \{\s*default upgrade;/);
  t.match(nginx, /proxy_read_timeout 3600s;/, 'streams outlive the default 60 s');
  t.match(nginx, /proxy_set_header X-Forwarded-For/);
  t.match(nginx, /client_max_body_size 17m;/, 'bodies up to the server’s own 16 MiB limit get through');
});
