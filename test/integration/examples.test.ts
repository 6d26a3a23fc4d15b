/**
 * The examples in examples/, built and run as their users would: the useChat page is type-checked,
 * bundled by its own build script and driven in Chromium against a real server; the AG-UI watcher
 * is type-checked and run against a real server.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { launchChromium } from '../helpers/browser.js';
import { listening } from '../helpers/process.js';
import { startServer, tempDir } from '../helpers/server.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const USE_CHAT = join(ROOT, 'examples/use-chat');

/** Type-checks an example with the TypeScript of `from` (the repository, or the example's own install). */
const typecheck = (project: string, from = ROOT) =>
  spawnSync(process.execPath, [join(from, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });

/**
 * The useChat example is a package of its own, with its own lock file, as a user would copy it:
 * installed here (`npm ci`) unless it is already (.ci/run installs it).
 */
function installUseChat(): { status: number | null; output: string } {
  if (existsSync(join(USE_CHAT, 'node_modules/.package-lock.json'))) return { status: 0, output: '' };
  const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: USE_CHAT, encoding: 'utf8', timeout: 300_000 });
  return { status: npm.status, output: `${npm.stdout}${npm.stderr}` };
}

t.test('the useChat example: type-checks, builds, and shows the session’s tool parts live in Chromium', async (t) => {
  const installed = installUseChat();
  t.equal(installed.status, 0, `npm ci in examples/use-chat: ${installed.output}`);
  const checked = typecheck('examples/use-chat', USE_CHAT);
  t.equal(checked.status, 0, `tsc -p examples/use-chat: ${checked.stdout}${checked.stderr}`);
  const { buildExample } = await import('../../examples/use-chat/build.mjs');
  const dist = await buildExample(tempDir(t));
  const page = createServer((req, res) => {
    const file = req.url?.startsWith('/app.js') ? 'app.js' : 'index.html';
    res.writeHead(200, { 'content-type': file === 'app.js' ? 'text/javascript' : 'text/html' }).end(readFileSync(join(dist, file)));
  });
  const pageUrl = await listening(t, page);

  const browser = await launchChromium(t);
  if (!browser) return;
  const srv = await startServer(t);
  const S = '/v1/sessions/ex1';
  await srv.post(`${S}/tool-calls`, { call_id: 'c1', name: 'grep', args: { q: 'TODO' } });
  const tab = await browser.newPage();
  const problems: string[] = [];
  tab.on('pageerror', (e) => problems.push(e.message));
  await tab.goto(`${pageUrl}/?server=${encodeURIComponent(srv.url)}&session=ex1`);

  const card = (id: string) => tab.locator(`article.tool[data-call-id="${id}"]`);
  await card('c1').and(tab.locator('[data-state="input-available"]')).waitFor({ timeout: 10_000 });
  t.equal(await card('c1').locator('.input').textContent(), '{"q":"TODO"}', 'the call, with its arguments, before its result');
  t.equal(await tab.locator('#status').textContent(), 'streaming', 'the stream stays open');

  await srv.post(`${S}/tool-results`, { call_id: 'c1', name: 'grep', result: { content: 'found 3' } });
  await card('c1').and(tab.locator('[data-state="output-available"]')).waitFor({ timeout: 10_000 });
  t.equal(await card('c1').locator('.output').textContent(), 'found 3', 'live: the result fills the same card');

  await srv.post(`${S}/tool-calls`, { call_id: 'c2', name: 'sh', args: { cmd: 'false' } });
  await srv.post(`${S}/tool-results`, { call_id: 'c2', name: 'sh', result: 'exit status 1', is_error: true });
  await srv.post(`${S}/events`, { type: 'progress', data: { step: 2 } });
  await card('c2').and(tab.locator('[data-state="output-error"]')).waitFor({ timeout: 10_000 });
  t.equal(await card('c2').locator('.error').textContent(), 'exit status 1', 'an error result');
  await tab.locator('.data[data-type="progress"]').waitFor({ timeout: 10_000 });
  t.equal(await tab.locator('.data[data-type="progress"]').textContent(), 'progress: {"step":2}', 'a generic event as a data part');
  t.equal(await tab.locator('article.tool').count(), 2, 'one card per call');

  // A reload: the page starts empty and reads the session again.
  await tab.reload();
  await card('c2').and(tab.locator('[data-state="output-error"]')).waitFor({ timeout: 10_000 });
  t.same(await Promise.all((await tab.locator('article.tool').all()).map(async (e) => [await e.getAttribute('data-call-id'), await e.getAttribute('data-state')])), [
    ['c1', 'output-available'],
    ['c2', 'output-error'],
  ], 'after a reload, the same cards');
  t.same(problems, [], 'no page error');
});

t.test('the AG-UI example: type-checks, and its watcher prints the session’s messages from a snapshot, then live', async (t) => {
  const checked = typecheck('examples/ag-ui-watch');
  t.equal(checked.status, 0, `tsc -p examples/ag-ui-watch: ${checked.stdout}${checked.stderr}`);
  const srv = await startServer(t);
  const S = '/v1/sessions/ex2';
  await srv.post(`${S}/tool-calls`, { call_id: 'c1', name: 'grep', args: { q: 'TODO' } });
  await srv.post(`${S}/tool-results`, { call_id: 'c1', name: 'grep', result: { content: 'found 3' } });
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/ag-ui-watch/watch.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOROLOGIUM_URL: srv.url, SESSION: 'ex2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { messages: Array<{ role: string; id: string; content?: string }> });
  const waitFor = async (pred: () => boolean, what: string) => {
    for (const end = Date.now() + 15_000; !pred(); await new Promise((r) => setTimeout(r, 50))) if (Date.now() > end) throw new Error(`${what}: ${out}`);
  };
  await waitFor(() => lines().some((l) => l.messages.length === 2), 'the snapshot');
  await srv.post(`${S}/tool-calls`, { call_id: 'c2', name: 'ls', args: { dir: '.' } });
  await srv.post(`${S}/tool-results`, { call_id: 'c2', name: 'ls', result: ['a'] });
  await waitFor(() => lines().some((l) => l.messages.length === 4), 'the live call');
  const last = lines().at(-1)?.messages ?? [];
  t.same(last.map((m) => [m.role, m.role === 'tool' ? m.content : m.id]), [
    ['assistant', 'c1'],
    ['tool', 'found 3'],
    ['assistant', 'c2'],
    ['tool', '["a"]'],
  ]);
  t.equal((await fetch(`${srv.url}${S}`, { method: 'DELETE' })).status, 200);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, 'the run finished when the session was deleted');
});
