/**
 * No Docker engine runs here, so the image's start command and the compose file are checked
 * statically, and the start command itself is run: the built server starts and answers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import semver from 'semver';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import { freePort } from '../helpers/process.js';
import { redisCommand, requireRedis } from '../helpers/redis.js';

const root = new URL('../../', import.meta.url);
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
  // The panel's page, stylesheet and icon go to dist/panel/ with its bundle (scripts/build-panel.mjs);
  // its tsconfig.json is the type check's, not read at run time.
  const panelFiles = [...read('scripts/build-panel.mjs').matchAll(/'([a-z-]+\.(?:html|css|svg))'/g)].map((m) => `panel/${m[1]}`);
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
  const cluster = ['horologium-cluster-a', 'horologium-cluster-b', 'redis-c1', 'redis-c2', 'redis-c3', 'redis-c4', 'redis-c5', 'redis-c6', 'redis-cluster-init'];
  t.same(Object.keys(s).sort(), ['horologium', 'horologium-a', 'horologium-b', 'lb', 'redis', ...cluster, 'jaeger', 'horologium-traced'].sort());
  for (const name of cluster) t.same(s[name].profiles, ['cluster'], `${name} starts only with the cluster profile`);
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
  t.match(nginx, /upstream horologium \{\s*server horologium-a:8080;\s*server horologium-b:8080;[^}]*\}/);
  t.match(nginx, /proxy_http_version 1\.1;/);
  t.match(nginx, /proxy_set_header Upgrade \$http_upgrade;/);
  t.match(nginx, /proxy_set_header Connection \$connection_upgrade;/);
  t.match(nginx, /map \$http_upgrade \$connection_upgrade \{\s*default upgrade;/);
  t.match(nginx, /proxy_read_timeout 3600s;/, 'streams outlive the default 60 s');
  t.match(nginx, /proxy_set_header X-Forwarded-For/);
  t.match(nginx, /client_max_body_size 17m;/, 'bodies up to the server’s own 16 MiB limit get through');
});

t.test('the image runs a pinned Node.js that engines, the lock file and CI agree on', async (t) => {
  const docker = read('Dockerfile');
  const image = /^ARG NODE_IMAGE=node:(\d+)\.(\d+)\.(\d+)-[a-z]+-slim$/m.exec(docker);
  t.ok(image, 'the base image is pinned to a Node.js release (node:X.Y.Z-<debian>-slim)');
  const version = image ? `${image[1]}.${image[2]}.${image[3]}` : '0.0.0';
  t.same(docker.match(/^FROM .*$/gm), ['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE}'], 'both stages use it');
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  t.ok(semver.satisfies(version, engines), `package.json engines (${engines}) accept the image's ${version}`);
  t.ok(semver.satisfies(process.versions.node, engines), `and the Node.js running these tests (${process.versions.node})`);
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version: string; engines?: { node?: string } }> };
  for (const [name, entry] of Object.entries(lock.packages)) {
    // Native addons are built for the Node.js that runs them: each must accept the image's and CI's.
    if (name !== 'node_modules/better-sqlite3') continue;
    const range = entry.engines?.node ?? '*';
    t.ok(semver.satisfies(version, range), `better-sqlite3 ${entry.version} (${range}) runs on the image's ${version}`);
    t.ok(semver.satisfies(process.versions.node, range), `and on ${process.versions.node}`);
  }
  t.match(docker, /HEALTHCHECK .*\/readyz/, 'the health check is readiness (/readyz), not liveness');
});

/**
 * Packages allowed to refuse this Node.js, each a dev-only dependency that no fix can avoid and that
 * README.md names (with why): the only EBADENGINE a user may see from npm ci.
 */
const ENGINE_EXCEPTIONS: Record<string, string> = {
  'node_modules/openai': '@openai/agents 0.20 (a dev dependency, for the OpenAI Agents SDK integration tests) requires openai ^7, which declares Node 22',
};

t.test('a quiet install: every package in the lock accepts the Node.js running the tests (no EBADENGINE from npm ci)', async (t) => {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean; engines?: { node?: string } | string[] }> };
  const refusing = Object.entries(lock.packages).filter(([, entry]) => entry.engines && !Array.isArray(entry.engines) && entry.engines.node && !semver.satisfies(process.versions.node, entry.engines.node));
  t.same(
    refusing.filter(([name]) => !(name in ENGINE_EXCEPTIONS)).map(([name, entry]) => `${name}@${entry.version} (${(entry.engines as { node: string }).node})`),
    [],
    `packages whose engines refuse ${process.versions.node}`,
  );
  const readme = read('README.md');
  for (const [name, entry] of refusing.filter(([name]) => name in ENGINE_EXCEPTIONS)) {
    t.ok(entry.dev === true || entry.devOptional === true, `${name} is dev-only (${ENGINE_EXCEPTIONS[name]})`);
    t.match(readme, new RegExp(`EBADENGINE\\b[^]*\\b${name.replace('node_modules/', '')}@`), `README.md says why ${name} warns`);
  }
});

t.test(".dockerignore keeps the host's dependencies, builds, data and history out of the build context", async (t) => {
  const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  for (const entry of ['.git', 'node_modules', 'dist', 'data', '*.db', '.env']) t.ok(ignored.includes(entry), entry);
  const docker = read('Dockerfile');
  for (const m of docker.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const source of (m[1] as string).split(' ')) t.notOk(ignored.includes(source.replace(/\/$/, '')), `${source}, copied by the Dockerfile, is not ignored`);
  }
});

t.test('compose: third-party images pinned by version; the load balancer waits for healthy instances', async (t) => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  for (const [name, svc] of Object.entries(compose.services as Record<string, { image?: string; build?: string }>)) {
    if (svc.build !== undefined) continue;
    t.match(svc.image, /:\d+\.\d+\.\d+(-[a-z0-9]+)?$/, `${name}: ${svc.image} names a release`);
  }
  t.same(compose.services.lb.depends_on, { 'horologium-a': { condition: 'service_healthy' }, 'horologium-b': { condition: 'service_healthy' } });
});

t.test('nginx: keepalive upstreams, request id and scheme passed, retries never resend a POST, JSON errors', async (t) => {
  const nginx = read('deploy/nginx.conf');
  t.match(nginx, /upstream horologium \{[^}]*keepalive \d+;/, 'idle upstream connections are kept');
  t.match(nginx, /map \$http_upgrade \$connection_upgrade \{\s*default upgrade;\s*''\s+'';/, 'a plain request clears Connection, so keepalive works');
  t.match(nginx, /proxy_set_header X-Forwarded-Proto \$scheme;/);
  t.match(nginx, /proxy_set_header X-Request-Id \$request_id_out;/);
  t.match(nginx, /proxy_next_upstream error timeout;/);
  t.notMatch(nginx, /proxy_next_upstream[^;]*non_idempotent/, 'a POST that reached an instance is never sent to another');
  t.match(nginx, /error_page 502 504 = @unreachable;/);
  // Run for real in test/ops/nginx.test.ts.
});

t.test('compose, cluster profile: six nodes joined with one replica each, two instances on redis+cluster:// that wait for a replica', async (t) => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const s = compose.services;
  const nodes = ['redis-c1', 'redis-c2', 'redis-c3', 'redis-c4', 'redis-c5', 'redis-c6'];
  for (const name of nodes) {
    const command = s[name].command as string[];
    t.match(command.join(' '), /--cluster-enabled yes .*--cluster-require-full-coverage no --appendonly yes --appendfsync always/, `${name}: a cluster node, AOF fsync always`);
    t.same(s[name].volumes, [`${name}-data:/data`], `${name} keeps its data (and nodes.conf) in its own volume`);
    t.same(s[name].healthcheck.test, ['CMD', 'redis-cli', 'ping']);
  }
  const init = s['redis-cluster-init'];
  t.same(Object.keys(init.depends_on).sort(), nodes, 'the join waits for every node');
  t.match(init.command[0], /redis-cli --cluster create .* --cluster-replicas 1 --cluster-yes/);
  t.notMatch(init.command[0].replaceAll('$$', ''), /\$[^$]/, 'every $ of the shell is escaped ($$) from compose');
  t.equal(spawnSync('sh', ['-n', '-c', init.command[0].replaceAll('$$', '$')]).status, 0, 'the join script, as compose hands it to sh, parses');
  for (const name of ['horologium-cluster-a', 'horologium-cluster-b']) {
    const config = loadConfig(composeEnv(s[name].environment));
    t.equal(config.store, 'redis+cluster://redis-c1:6379,redis-c2:6379,redis-c3:6379', `${name}: a valid configuration on the cluster`);
    t.equal(config.redisWaitReplicas, 1, 'writes wait for one replica');
    t.same(s[name].depends_on, { 'redis-cluster-init': { condition: 'service_completed_successfully' } });
  }
  t.not(s['horologium-cluster-a'].ports[0], s['horologium-cluster-b'].ports[0], 'each on its own port');
  // The node's command, as compose runs it, is one redis-server accepts (here on a free port of this test's own).
  if (!requireRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'horologium-compose-node-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const args = (s['redis-c1'].command as string[]).slice(1).map((a) => (a === '6379' ? String(port) : a));
  const node = spawn('redis-server', [...args, '--dir', dir, '--cluster-port', String(await freePort()), '--bind', '127.0.0.1'], { stdio: 'ignore' });
  t.teardown(() => node.kill('SIGKILL'));
  let info = '';
  for (let k = 0; k < 100 && !info.includes('cluster_enabled:1'); k++) {
    await new Promise((r) => setTimeout(r, 50));
    info = await redisCommand(port, 'INFO', 'cluster').catch(() => '');
  }
  t.match(info, /cluster_enabled:1/, 'redis-server runs the node command, as a cluster node');
});

t.test('compose, tracing profile: Jaeger takes OTLP, one instance exports a span per tool execution to it', async (t) => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const s = compose.services;
  for (const name of ['jaeger', 'horologium-traced']) t.same(s[name].profiles, ['tracing'], `${name} starts only with the tracing profile`);
  t.match(s.jaeger.image, /^jaegertracing\/jaeger:2\.\d+\.\d+$/, 'Jaeger v2 (OTLP built in), a pinned version');
  t.same(s.jaeger.ports, ['127.0.0.1:16686:16686'], 'its UI, on loopback');
  const env = composeEnv(s['horologium-traced'].environment);
  const config = loadConfig(env);
  t.same(config.tracing, { protocol: 'http/protobuf', captureContent: false }, 'a valid configuration with tracing on, content off by default');
  t.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, 'http://jaeger:4318', "Jaeger's OTLP/HTTP port, by its service name");
  t.same(s['horologium-traced'].depends_on, ['jaeger']);
  t.same(s['horologium-traced'].volumes, ['horologium-traced-data:/data']);
  t.ok('horologium-traced-data' in compose.volumes);
});
