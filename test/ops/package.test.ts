/**
 * The package as a new user gets it: `npm pack` on an unbuilt clone (prepack builds), the tarball's
 * contents, an install into a temporary project, each entry point imported in Node (no port opened,
 * no file created), the client and producer loadable by a browser with no bundler (relative imports
 * only), a TypeScript file type-checked against the emitted types with `ws` passed as the README
 * shows, and the installed `horologium` bin serving.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import t from 'tap';
import { importSpecifiers } from '../helpers/imports.js';
import { freePort } from '../helpers/process.js';
import { projectCopy, ROOT, run } from '../helpers/project-copy.js';

const version = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

t.test('pack, install, import, type-check and run', async (t) => {
  const project = projectCopy(t);
  t.notOk(existsSync(join(project, 'dist')), 'the copy is unbuilt, like a fresh clone');
  const out = dirname(project);
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: project, maxBuffer: 16 << 20 });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = packed!.files.map((f) => f.path);

  t.test('the tarball holds what users need and nothing else', async (t) => {
    for (const need of ['dist/index.js', 'dist/index.d.ts', 'dist/client/index.js', 'dist/client/index.d.ts', 'dist/producer/index.js', 'dist/producer/index.d.ts', 'dist/cli/main.js', 'dist/store/lua/lib.lua', 'LICENSE', 'README.md', 'package.json', 'docs/protocol.md']) {
      t.ok(files.includes(need), need);
    }
    t.same(files.filter((f) => /^(test|bench|src|scripts|\.ci)\//.test(f) || f.endsWith('.map') || f.endsWith('.test.ts')), [], 'no tests, benchmarks, sources or source maps');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    t.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), new RegExp(`^${pkg.license} License`), 'LICENSE matches license');
  });

  const user = join(out, 'user');
  mkdirSync(user);
  writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'user', private: true, type: 'module' }));
  // From the npm cache that `npm ci` filled; no install scripts: importing needs no native build.
  await run(
    'npm',
    ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(out, packed!.filename), `ws@${version('ws')}`, `typescript@${version('typescript')}`, `@types/ws@${version('@types/ws')}`, `@types/node@${version('@types/node')}`],
    { cwd: user, maxBuffer: 16 << 20 },
  );
  const installed = join(user, 'node_modules', 'horologium');

  t.test('each entry point imports in Node, opening no port and creating no file', async (t) => {
    writeFileSync(
      join(user, 'imports.mjs'),
      `import { readdirSync } from 'node:fs';
const before = readdirSync('.').sort();
const lib = await import('horologium');
const client = await import('horologium/client');
const producer = await import('horologium/producer');
await new Promise((r) => setTimeout(r, 200));
console.log(JSON.stringify({
  before, after: readdirSync('.').sort(), resources: process.getActiveResourcesInfo(),
  lib: Object.keys(lib).sort(), client: Object.keys(client).sort(), producer: Object.keys(producer).sort(),
}));`,
    );
    const { stdout } = await run(process.execPath, ['imports.mjs'], { cwd: user, timeout: 20_000 });
    const seen = JSON.parse(stdout) as Record<string, string[]>;
    t.same(seen.after, seen.before, 'no file or folder created (no ./data)');
    t.same(seen.resources!.filter((r) => /TCP|UDP/.test(r)), [], `no network socket open (${seen.resources}: the pipes are this test's stdout and stderr)`);
    for (const name of ['buildApp', 'loadConfig', 'runServer', 'ConfigError']) t.ok(seen.lib!.includes(name), `horologium exports ${name}`);
    t.ok(seen.client!.includes('HorologiumClient'), 'horologium/client exports HorologiumClient');
    for (const name of ['Producer', 'QueueConsumer', 'rawJson', 'CallIdConflictError', 'HorologiumRequestError']) t.ok(seen.producer!.includes(name), `horologium/producer exports ${name}`);
  });

  t.test('client and producer load in a browser without a bundler: relative imports only', async (t) => {
    for (const entry of ['dist/client/index.js', 'dist/producer/index.js']) {
      const graph = new Set<string>();
      const visit = (file: string) => {
        if (graph.has(file)) return;
        graph.add(file);
        for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
          if (!spec.startsWith('./') && !spec.startsWith('../')) t.fail(`${file.slice(installed.length + 1)} imports ${spec}, which a browser cannot resolve`);
          else visit(resolve(dirname(file), spec));
        }
      };
      visit(join(installed, entry));
      t.pass(`${entry}: ${graph.size} modules, every import relative`);
    }
  });

  t.test('a TypeScript file type-checks against the emitted types, ws passed as documented', async (t) => {
    writeFileSync(
      join(user, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'] }, include: ['check.ts'] }),
    );
    writeFileSync(
      join(user, 'check.ts'),
      `import WebSocket from 'ws';
import { buildApp, loadConfig } from 'horologium';
import { HorologiumClient, type StatusEvent } from 'horologium/client';
import { Producer, QueueConsumer, rawJson, CallIdConflictError } from 'horologium/producer';

const client = new HorologiumClient({
  url: 'ws://127.0.0.1:8080/v1/stream',
  WebSocket,
  token: async () => 'token',
  onEvent: (event: StatusEvent, frame: string) => console.log(event.seq, event.data, frame.length),
  onClose: ({ code, willReconnect }) => console.log(code, willReconnect),
});
client.subscribe('s1', 0);
const producer = new Producer({ url: 'http://127.0.0.1:8080', token: 'token' });
const n: number = await producer.track('s1', 'grep', { q: 'x' }, async () => 42);
await producer.toolResult('s1', { call_id: 'c', name: 'grep', result: rawJson('{"big":12345678901234567890}') });
for await (const entry of new QueueConsumer({ url: 'http://127.0.0.1:8080', session: 's1' })) console.log(entry.message.content);
const conflict: CallIdConflictError | undefined = undefined;
const app = await buildApp(loadConfig({ HOROLOGIUM_STORE: 'memory:' }));
console.log(n, conflict, app.server.listening);
`,
    );
    const tsc = (project: string) =>
      run(process.execPath, [join(user, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: user }).catch((e: { stdout: string }) => e) as Promise<{ stdout: string }>;
    t.equal((await tsc('.')).stdout, '', 'Node with ws: tsc reports nothing');
    // The same client in a browser page: the DOM's WebSocket, no Node types at all.
    writeFileSync(
      join(user, 'tsconfig.browser.json'),
      JSON.stringify({ compilerOptions: { module: 'es2022', moduleResolution: 'bundler', target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, types: [] }, include: ['browser.ts'] }),
    );
    writeFileSync(
      join(user, 'browser.ts'),
      `import { HorologiumClient } from 'horologium/client';
import { Producer } from 'horologium/producer';
const client = new HorologiumClient({ url: 'ws://127.0.0.1:8080/v1/stream', WebSocket, onEvent: (e) => document.title = String(e.seq) });
client.subscribe('s1');
new Producer({ url: location.origin });
`,
    );
    t.equal((await tsc('tsconfig.browser.json')).stdout, '', "a browser's WebSocket: tsc reports nothing");
  });

  t.test('the installed bin answers --help and serves', async (t) => {
    const bin = join(user, 'node_modules', '.bin', 'horologium');
    const help = await run(bin, ['--help'], { cwd: user });
    for (const command of ['serve', 'tail', 'post', 'sessions', 'queue']) t.match(help.stdout, new RegExp(`^  ${command} `, 'm'), `--help lists ${command}`);
    const port = await freePort();
    const child = spawn(bin, ['serve', '--port', String(port), '--store', 'memory:', '--log-level', 'silent'], { cwd: user, stdio: 'ignore' });
    t.teardown(() => child.kill('SIGKILL'));
    let ok = false;
    for (const end = Date.now() + 15_000; !ok && Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
      ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    }
    t.ok(ok, 'GET /healthz answers');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    t.equal(code, 0, 'SIGTERM stops it cleanly');
  });
});
