/**
 * /metrics as Prometheus reads it, scraped from real listening servers: the exposition passes
 * Prometheus's own parser and linter (`promtool check metrics`), every `horologium_*` metric has the
 * name, type and labels docs/operations.md gives it (and the document lists nothing the server does
 * not export), labels stay bounded (1,000 random event types add no series), and the HTTP, build,
 * store and Redis metrics count what happened.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { startRedis, requireRedis } from '../helpers/redis.js';
import { startServer } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

const ROOT = new URL('../../', import.meta.url);
const VERSION = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string }).version;

/** `promtool` (Debian's prometheus package; .ci/run installs it): Prometheus's own parser and linter. */
function promtool(t: Test): boolean {
  if (spawnSync('promtool', ['--version']).status === 0) return true;
  if (process.env.CI === 'true') t.fail('promtool not found: install Debian\'s prometheus package (.ci/run does)');
  else t.comment('promtool not found (apt-get install prometheus): the exposition is not linted here');
  return false;
}

interface Family {
  type: string;
  /** Each series: its label names (without `le`) and the text that identifies it. */
  series: Array<{ name: string; labels: Record<string, string>; value: number }>;
}

/** The families of a scrape, from its # TYPE lines and samples (after promtool has parsed the same text). */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      out.set(type[1] as string, (current = { type: type[2] as string, series: [] }));
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || !current) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    current.series.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** The metrics table of docs/operations.md: name → type and label names. */
function documented(): Map<string, { type: string; labels: string[] }> {
  const doc = readFileSync(new URL('docs/operations.md', ROOT), 'utf8');
  const out = new Map<string, { type: string; labels: string[] }>();
  for (const row of doc.matchAll(/^\| `(horologium_[a-z_]+)` \| (\w+) \|([^|]*)\|/gm)) {
    // The label names; what a parenthesis says of their values is not a label.
    const labels = [...(row[3] as string).replace(/\([^)]*\)/g, '').matchAll(/`([a-z_]+)`/g)].map((l) => l[1] as string);
    out.set(row[1] as string, { type: row[2] as string, labels });
  }
  return out;
}

const seriesIds = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith('horologium_'))
      .map((l) => l.slice(0, l.lastIndexOf(' '))),
  );

async function scrape(srv: { get(path: string): Promise<{ text: string }> }) {
  return (await srv.get('/metrics')).text;
}

t.test('the exposition passes promtool, and every horologium_ metric is the one docs/operations.md describes', async (t) => {
  const srv = await startServer(t);
  await srv.post('/v1/sessions/conv/tool-calls', { call_id: 'c1', name: 'read_file', args: {} });
  await srv.post('/v1/sessions/conv/tool-results', { call_id: 'c1', name: 'read_file', result: 'x' });
  await srv.get('/no/such/path');
  const text = await scrape(srv);

  if (promtool(t)) {
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // Exit 3 is "lint problems"; a text promtool cannot parse is another code.
    t.ok(lint.status === 0 || lint.status === 3, `promtool parsed the exposition (exit ${lint.status}: ${lint.stderr}${lint.stdout})`);
    const problems = `${lint.stdout}${lint.stderr}`.split('\n').filter((l) => l.trim() !== '');
    // prom-client's own default gauges nodejs_active_*_total keep their standard (if unidiomatic) names.
    const ours = problems.filter((p) => !/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/.test(p));
    t.same(ours, [], 'no lint problem in any metric of ours');
  }

  const scraped = families(text);
  const doc = documented();
  t.ok(doc.size >= 20, `the document's table was read (${doc.size} rows)`);
  const exported = [...scraped.keys()].filter((n) => n.startsWith('horologium_')).sort();
  t.same(exported, [...doc.keys()].sort(), 'the server exports exactly the metrics the document lists');
  for (const [name, family] of scraped) {
    if (!name.startsWith('horologium_')) continue;
    const entry = doc.get(name);
    t.equal(family.type, entry?.type, `${name} is a ${entry?.type}`);
    if (family.type === 'counter') t.match(name, /_total$/, `${name}: a counter ends in _total`);
    for (const s of family.series) {
      t.same(Object.keys(s.labels).filter((l) => l !== 'le').sort(), [...(entry?.labels ?? [])].sort(), `${s.name}'s labels are the documented ones`);
    }
  }
  t.ok(scraped.has('process_cpu_seconds_total') && scraped.has('nodejs_heap_size_used_bytes'), "Node's default metrics under their standard names");
  t.notOk([...scraped.keys()].some((n) => /^horologium_(process|nodejs)_/.test(n)));

  const build = scraped.get('horologium_build_info')?.series ?? [];
  t.same(build.map((s) => [s.labels, s.value]), [[{ version: VERSION, node: process.versions.node }, 1]]);
  const durations = scraped.get('horologium_http_request_duration_seconds')?.series ?? [];
  const count = (route: string, method: string, statusClass: string) =>
    durations.find((s) => s.name.endsWith('_count') && s.labels.route === route && s.labels.method === method && s.labels.status_class === statusClass)?.value;
  t.equal(count('/v1/sessions/:session/tool-results', 'POST', '2xx'), 1);
  t.equal(count('/v1/sessions/:session/tool-calls', 'POST', '2xx'), 1);
  t.equal(count('unmatched', 'GET', '4xx'), 1, 'an unknown path is one series, whatever the path');
  // sqlite: two writes, in one or two commits, each timed.
  const commits = scraped.get('horologium_store_commit_duration_seconds')?.series ?? [];
  const commitCount = commits.find((s) => s.name.endsWith('_count'))?.value ?? 0;
  t.ok(commitCount >= 1 && commitCount <= 2, `the writes were committed in ${commitCount} commits`);
  t.equal(scraped.get('horologium_store_commit_writes')?.series.find((s) => s.name.endsWith('_sum'))?.value, 2, 'holding the two writes');
});

t.test('1,000 random event types add no series', async (t) => {
  const srv = await startServer(t, { rateLimit: 0 });
  await srv.post('/v1/sessions/rand/events', { type: 'warm_up', data: {} });
  await scrape(srv); // the first scrape is itself a request: its series exist from the second on
  const before = seriesIds(await scrape(srv));
  for (let k = 0; k < 1000; k++) {
    const type = `t${Math.random().toString(36).slice(2, 12)}_${k}`;
    const r = await srv.post('/v1/sessions/rand/events', { type, data: { k } });
    if (r.status !== 202) t.fail(`event ${k}: ${r.status}`);
  }
  const text = await scrape(srv);
  t.same([...seriesIds(text)].filter((s) => !before.has(s)), [], 'no new horologium_ series');
  t.match(text, /horologium_events_appended_total\{type="other"\} 1001/, 'every one of them counted as other');
});

t.test('Redis errors and reconnects are counted while Redis is down', async (t) => {
  if (!requireRedis(t)) return;
  const redis = await startRedis(t);
  const srv = await startServer(t, { store: redis.url });
  t.equal((await srv.post('/v1/sessions/rds/events', { type: 'a', data: {} })).status, 202);
  let m = families(await scrape(srv));
  const value = (name: string) => m.get(name)?.series[0]?.value;
  t.equal(value('horologium_redis_command_errors_total'), 0);
  t.equal(value('horologium_redis_reconnects_total'), 0);
  t.equal(m.get('horologium_store_commit_writes')?.series.find((s) => s.name.endsWith('_count'))?.value, 1, 'a redis commit is one write');
  await redis.kill();
  t.equal((await srv.post('/v1/sessions/rds/events', { type: 'a', data: {} })).status, 503);
  for (let k = 0; k < 100 && (value('horologium_redis_reconnects_total') ?? 0) < 2; k++) {
    await sleep(100);
    m = families(await scrape(srv));
  }
  t.ok((value('horologium_redis_command_errors_total') ?? 0) >= 1, 'the failed write is a command error');
  t.ok((value('horologium_redis_reconnects_total') ?? 0) >= 2, 'both connections try to reconnect');
});
