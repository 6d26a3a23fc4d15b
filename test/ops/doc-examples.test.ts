/**
 * Every example in the docs runs as written (issue 44, part 1). The fenced code blocks of README.md,
 * sdk/README.md, docs/*.md, clients/*\/README.md and examples/README.md say what they are in their
 * info string: ```js runnable, ```python runnable, ```sh runnable (shell with curl), or ```… fragment
 * for a block that is not a whole program (a server that runs until stopped, a React hook). A
 * JavaScript, TypeScript, Python or Ruby block, or a shell block with curl, that says neither fails
 * here, as does a runnable block of a language this test cannot run.
 *
 * Each document's runnable blocks run in order, as a reader would paste them, against one real
 * server started here; only the URL is changed (127.0.0.1:8080 and localhost:8080 become the
 * server's). A block fails when it exits non-zero or runs past its deadline. JavaScript imports the
 * SDK as an application installs it (horologium-sdk built from these sources into the app's
 * node_modules, with ws and the AI SDK beside it); Python and Ruby use the clients of this repository.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ROOT } from '../helpers/project-copy.js';
import { startServer, tempDir } from '../helpers/server.js';

/** How long one block may run. */
const DEADLINE_MS = 30_000;

const DOCUMENTS = [
  'README.md',
  'sdk/README.md',
  ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'clients')).map((c) => `clients/${c}/README.md`),
  'examples/README.md',
];

type Runner = 'node' | 'tsx' | 'python' | 'ruby' | 'shell';
const RUNNERS: Record<string, Runner> = {
  js: 'node', mjs: 'node', javascript: 'node',
  ts: 'tsx', typescript: 'tsx',
  python: 'python', py: 'python',
  ruby: 'ruby', rb: 'ruby',
  sh: 'shell', bash: 'shell', shell: 'shell',
};
const EXTENSION: Record<Runner, string> = { node: 'mjs', tsx: 'ts', python: 'py', ruby: 'rb', shell: 'sh' };

interface Block {
  document: string;
  /** The line of the opening fence, from 1. */
  line: number;
  language: string;
  mark: 'runnable' | 'fragment' | undefined;
  code: string;
}

function fencedBlocks(document: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
    const words = open[2]!.trim().split(/\s+/);
    const mark = words.includes('runnable') ? 'runnable' : words.includes('fragment') ? 'fragment' : undefined;
    blocks.push({ document, line: start + 1, language: open[1]!.toLowerCase(), mark, code: `${body.join('\n')}\n` });
  }
  return blocks;
}

/** Why a block's marking is wrong, or undefined when it is right. */
function markingProblem(block: Block): string | undefined {
  const runner = RUNNERS[block.language];
  if (block.mark === 'runnable' && !runner) return `is marked runnable, but this test cannot run ${block.language || 'a block without a language'}`;
  if (block.mark !== undefined || !runner) return undefined;
  if (runner !== 'shell') return 'says neither runnable nor fragment';
  return /\bcurl\b/.test(block.code) ? 'is shell with curl and says neither runnable nor fragment' : undefined;
}

/** The block's code pointed at the test's server: only the URL changes. */
function pointedAt(code: string, hostPort: string): string {
  return code.replace(/\b(https?|wss?):\/\/(?:127\.0\.0\.1|localhost):8080\b/g, `$1://${hostPort}`).replace(/(?<![\w/.:-])(?:127\.0\.0\.1|localhost):8080\b/g, hostPort);
}

/** An application folder as an agent backend has it: horologium-sdk (built from these sources) and ws installed. */
async function applicationFolder(t: Test): Promise<string> {
  const app = join(tempDir(t), 'app');
  const sdk = join(app, 'node_modules', 'horologium-sdk');
  mkdirSync(sdk, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'doc-examples', private: true, type: 'module' }));
  cpSync(join(ROOT, 'sdk', 'package.json'), join(sdk, 'package.json'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const built = await run(process.execPath, [tsc, '-p', join(ROOT, 'sdk'), '--outDir', join(sdk, 'dist')], { cwd: ROOT, env: process.env });
  if (built.code !== 0) throw new Error(`the SDK did not build: ${built.output}`);
  // What the examples install beside the SDK: ws (Node 20's WebSocket) and the agent frameworks of docs/integrations.md.
  for (const peer of ['ws', 'ai', '@langchain', '@openai', 'zod']) symlinkSync(join(ROOT, 'node_modules', peer), join(app, 'node_modules', peer), 'dir');
  return app;
}

interface Outcome {
  code: number | null;
  timedOut: boolean;
  output: string;
}

function run(file: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(file, args, { ...options, timeout: DEADLINE_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const failure = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
      resolve({
        code: failure ? (typeof failure.code === 'number' ? failure.code : -1) : 0,
        timedOut: failure?.killed === true,
        output: `${stdout}${stderr}${failure && typeof failure.code === 'string' ? failure.message : ''}`,
      });
    });
  });
}

/** The command that runs a block's file, or why it cannot run here. */
function command(runner: Runner, file: string): { file: string; args: string[]; env?: NodeJS.ProcessEnv } | { missing: string } {
  const has = (binary: string) => spawnSync(binary, ['--version'], { encoding: 'utf8' }).status === 0;
  switch (runner) {
    case 'node':
      return { file: process.execPath, args: [file] };
    case 'tsx':
      return { file: process.execPath, args: [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), file] };
    case 'python':
      return has('python3') ? { file: 'python3', args: [file], env: { PYTHONPATH: join(ROOT, 'clients', 'python') } } : { missing: 'python3' };
    case 'ruby':
      return has('ruby') ? { file: 'ruby', args: ['-I', join(ROOT, 'clients', 'ruby', 'lib'), file] } : { missing: 'ruby' };
    case 'shell':
      return has('curl') ? { file: 'bash', args: ['-eo', 'pipefail', file] } : { missing: 'curl' };
  }
}

const blocks = DOCUMENTS.flatMap((document) => fencedBlocks(document, readFileSync(join(ROOT, document), 'utf8')));

t.test('every code block says whether it runs, and only blocks this test can run say so', async (t) => {
  const wrong = blocks.flatMap((b) => {
    const problem = markingProblem(b);
    return problem ? [`${b.document}:${b.line} (${b.language}) ${problem}`] : [];
  });
  t.same(wrong, [], 'blocks marked wrongly');
  const runnable = blocks.filter((b) => b.mark === 'runnable');
  t.ok(runnable.length >= 8, `${runnable.length} runnable blocks`);
  for (const b of blocks.filter((b) => b.mark === 'fragment')) t.comment(`fragment, not run: ${b.document}:${b.line} (${b.language})`);
});

t.test('the marking rules themselves, on a made-up document', async (t) => {
  const made = ['```js', 'a()', '```', '```python fragment', 'b()', '```', '```json runnable', '{}', '```', '```sh', 'curl x', '```', '```sh', 'npm ci', '```', '```ruby runnable', 'c', '```'].join('\n');
  const found = fencedBlocks('made.md', made).map((b) => [b.line, b.language, b.mark ?? null, markingProblem(b) ?? null]);
  t.same(found, [
    [1, 'js', null, 'says neither runnable nor fragment'],
    [4, 'python', 'fragment', null],
    [7, 'json', 'runnable', 'is marked runnable, but this test cannot run json'],
    [10, 'sh', null, 'is shell with curl and says neither runnable nor fragment'],
    [13, 'sh', null, null],
    [16, 'ruby', 'runnable', null],
  ]);
  t.equal(pointedAt("fetch('http://127.0.0.1:8080/x'); ws://localhost:8080/v1; curl -s localhost:8080/v1", '127.0.0.1:5555'), "fetch('http://127.0.0.1:5555/x'); ws://127.0.0.1:5555/v1; curl -s 127.0.0.1:5555/v1");
});

t.test('every runnable block runs as written against a real server', async (t) => {
  const app = await applicationFolder(t);
  const byDocument = new Map<string, Block[]>();
  for (const b of blocks) if (b.mark === 'runnable' && RUNNERS[b.language]) byDocument.set(b.document, [...(byDocument.get(b.document) ?? []), b]);
  for (const [document, runnable] of byDocument) {
    await t.test(document, async (t) => {
      const srv = await startServer(t);
      const hostPort = new URL(srv.url).host;
      for (const [k, block] of runnable.entries()) {
        const runner = RUNNERS[block.language]!;
        const file = join(app, `${document.replace(/[/.]/g, '_')}-${k}.${EXTENSION[runner]}`);
        writeFileSync(file, pointedAt(block.code, hostPort));
        const how = command(runner, file);
        if ('missing' in how) {
          if (process.env.CI === 'true') t.fail(`${document}:${block.line}: ${how.missing} is missing; CI must run every example`);
          else t.comment(`SKIP ${document}:${block.line}: ${how.missing} is not installed here`);
          continue;
        }
        const started = Date.now();
        const outcome = await run(how.file, how.args, { cwd: app, env: { ...process.env, ...how.env } });
        const where = `${document}:${block.line} (${block.language})`;
        t.notOk(outcome.timedOut, `${where} ends within ${DEADLINE_MS / 1000} s${outcome.timedOut ? `; it printed:\n${outcome.output}` : ''}`);
        t.equal(outcome.code, 0, `${where} exits 0 (${Date.now() - started} ms)${outcome.code === 0 ? '' : `; it printed:\n${outcome.output}`}`);
      }
    });
  }
});
