/**
 * The SDK package (sdk/, `horologium-sdk`) as an agent backend installs it: packed (which builds it),
 * installed from the tarball into an empty project with no registry access, holding nothing but
 * itself (no server package, no native build, no install script), and working there: the producer
 * posts to a real server, the queue consumer reads it back, and the stream client (with the
 * repository's `ws`, as Node 20 has no global WebSocket) sees the events.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ROOT } from '../helpers/project-copy.js';
import { startServer, tempDir } from '../helpers/server.js';

const run = promisify(execFile);

/** Bytes under `dir`, following no links. */
function size(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? size(path) : statSync(path).size;
  }
  return total;
}

t.test('the packed SDK installs alone, offline, with nothing of the server, and works', async (t) => {
  const work = tempDir(t);
  // As the README says to get it: npm run pack:sdk, which prints the install line.
  const packScript = await run('npm', ['run', '--silent', 'pack:sdk', '--', work], { cwd: ROOT, timeout: 120_000 });
  const installLine = /^npm install (\S+horologium-sdk-[0-9.]+\.tgz)\n$/.exec(packScript.stdout);
  t.ok(installLine, `npm run pack:sdk prints the install line: ${JSON.stringify(packScript.stdout)}`);
  t.ok(installLine && statSync(installLine[1]!).size > 0, 'and the tarball it names is there');
  const listed = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: join(ROOT, 'sdk'), timeout: 120_000 });
  const [info] = JSON.parse(listed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const shipped = info!.files.map((f) => f.path).sort();
  t.ok(shipped.includes('dist/client/index.js') && shipped.includes('dist/producer/index.d.ts'), 'the client and producer, with types');
  t.same(shipped.filter((p) => !/^(dist\/|package\.json$|README\.md$)/.test(p)), [], 'nothing but dist/, package.json and the README');
  t.same(shipped.filter((p) => /store|routes|app\.|server|cli\//.test(p)), [], 'no server code');

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'agent-backend', version: '1.0.0', type: 'module', private: true }));
  const started = Date.now();
  const install = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', installLine![1]!], { cwd: app, timeout: 120_000 });
  const installMs = Date.now() - started;
  t.notMatch(install.stderr, /install-scripts|gyp/, 'no install script, no native build');
  const modules = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'));
  t.same(modules, ['horologium-sdk'], 'node_modules holds the SDK and nothing else');
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules/horologium-sdk/package.json'), 'utf8'));
  t.same([manifest.dependencies, manifest.scripts?.install, manifest.scripts?.postinstall], [undefined, undefined, undefined], 'no dependency, no install script');
  const bytes = size(join(app, 'node_modules'));
  t.ok(bytes < 400_000, `installed size ${bytes} bytes`);
  t.comment(`horologium-sdk: installed in ${installMs} ms, ${bytes} bytes in node_modules`);

  const srv = await startServer(t);
  const ws = join(ROOT, 'node_modules/ws/wrapper.mjs');
  writeFileSync(
    join(app, 'main.js'),
    `import { Producer, QueueConsumer } from 'horologium-sdk/producer';
import { HorologiumClient, isToolCompleted } from 'horologium-sdk/client';
import WebSocket from ${JSON.stringify(ws)};
const url = process.argv[2];
const producer = new Producer({ url });
const out = await producer.track('sdk1', 'grep', { q: 'TODO' }, async () => ({ content: 'found 3' }));
const seen = [];
const client = new HorologiumClient({ url: url.replace('http', 'ws') + '/v1/stream', WebSocket,
  onEvent: (e) => { seen.push(isToolCompleted(e) ? 'done ' + e.data.name + ' ' + e.data.result : e.type); } });
client.subscribe('sdk1', 0);
let entry;
for await (entry of new QueueConsumer({ url, session: 'sdk1', wait: 1 })) break;
while (seen.length < 2) await new Promise((r) => setTimeout(r, 20));
client.close();
console.log(JSON.stringify({ out, entry: entry.message.content, seen }));
`,
  );
  const result = await run(process.execPath, ['main.js', srv.url], { cwd: app, timeout: 30_000 });
  t.same(JSON.parse(result.stdout), { out: { content: 'found 3' }, entry: '{"content":"found 3"}', seen: ['tool_starting', 'done grep found 3'] }, 'posts, reads the queue, and follows the stream');

  // Without ws and without a global WebSocket (Node 20; the global is removed on later Node), the
  // client says so at once, with the ways out (issue 44, part 2).
  writeFileSync(
    join(app, 'no-ws.js'),
    `delete globalThis.WebSocket;
const { HorologiumClient } = await import('horologium-sdk');
try { new HorologiumClient({ url: 'ws://127.0.0.1:9/v1/stream', onEvent() {} }); console.log('constructed'); }
catch (err) { console.log(JSON.stringify({ name: err.name, message: err.message })); }
`,
  );
  const noWs = await run(process.execPath, ['no-ws.js'], { cwd: app, timeout: 30_000 });
  t.same(JSON.parse(noWs.stdout), {
    name: 'Error',
    message:
      'horologium-sdk/client: no WebSocket class here: this runtime has no global WebSocket (Node.js before 22) and the optional peer "ws" is not installed. Install it (npm install ws), pass { WebSocket } to HorologiumClient, or use Node.js 22 or later.',
  }, 'no ws: an error at construction that says what to do');

  // horologium-sdk/ai loads nothing of the AI SDK (an optional peer, absent here): importing it works alone.
  const aiEntry = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('horologium-sdk/ai'); console.log(typeof m.withHorologium, typeof m.flush)"], { cwd: app, timeout: 30_000 });
  t.equal(aiEntry.stdout.trim(), 'function function', 'horologium-sdk/ai imports without ai installed');

  // With ws installed beside it, the root entry's client works as sdk/README.md writes it: no WebSocket passed.
  symlinkSync(join(ROOT, 'node_modules/ws'), join(app, 'node_modules/ws'), 'dir');
  writeFileSync(
    join(app, 'root-entry.js'),
    `delete globalThis.WebSocket;
import { Producer, QueueConsumer, HorologiumClient, isToolCompleted, rawJson } from 'horologium-sdk';
const url = process.argv[2];
const seen = [];
const client = new HorologiumClient({ url: url.replace('http', 'ws') + '/v1/stream', onEvent: (e) => seen.push(isToolCompleted(e) ? 'done ' + e.data.name : e.type) });
client.subscribe('sdk2', 0);
await new Producer({ url }).track('sdk2', 'ls', {}, async () => rawJson('{"content":"a b"}'));
let entry;
for await (entry of new QueueConsumer({ url, session: 'sdk2', wait: 1 })) break;
while (seen.length < 2) await new Promise((r) => setTimeout(r, 20));
client.close();
console.log(JSON.stringify({ entry: entry.message.content, seen, types: [typeof Producer, typeof QueueConsumer, typeof HorologiumClient] }));
`,
  );
  const rooted = await run(process.execPath, ['root-entry.js', srv.url], { cwd: app, timeout: 30_000 });
  t.same(JSON.parse(rooted.stdout), { entry: '{"content":"a b"}', seen: ['tool_starting', 'done ls'], types: ['function', 'function', 'function'] }, "the root entry's producer, consumer and client; ws loaded by the client itself");
});
