/**
 * deploy/prometheus and deploy/grafana: the Prometheus configuration and alert rules pass
 * `promtool check config`, the alerts' unit tests (alerts.test.yml) pass `promtool test rules`,
 * every dashboard query parses as PromQL, and every metric a query or an alert names is one a real
 * server exports (or Prometheus's own `up`). The dashboard and the alerts cover what an operator
 * watches first: stream connections, the event rate, 4008 closes, 5xx replies, store latency and
 * Redis errors.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startServer, tempDir } from '../helpers/server.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));

function promtool(t: Test): boolean {
  if (spawnSync('promtool', ['--version']).status === 0) return true;
  if (process.env.CI === 'true') t.fail("promtool not found: install Debian's prometheus package (.ci/run does)");
  else t.comment('SKIP: promtool not found (apt-get install prometheus): the rules and queries were not checked');
  return false;
}

const run = (args: string[], cwd = DEPLOY) => spawnSync('promtool', args, { cwd, encoding: 'utf8' });

interface Dashboard {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
}
const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana/horologium-dashboard.json'), 'utf8')) as Dashboard;
const dashboardQueries = dashboard.panels.flatMap((p) => p.targets.map((q) => ({ panel: p.title, expr: q.expr })));
const alertQueries = [...readFileSync(join(DEPLOY, 'prometheus/alerts.yml'), 'utf8').matchAll(/expr: (?:\|\n)?([\s\S]*?)\n\s+for:/g)].map((m) => (m[1] as string).trim());

/** Grafana's own variables, as Prometheus would see them once Grafana has filled them in. */
const asPromql = (expr: string) => expr.replaceAll('$__rate_interval', '5m');

/** The metric names of a PromQL expression (identifiers before `{`, `[`, `)` or the end, not functions or labels). */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const withoutGroupings = withoutStrings.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...withoutGroupings.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1] as string)
    .filter((name) => /^(horologium_|process_|nodejs_|up$)/.test(name));
}

t.test('promtool accepts the Prometheus configuration and the alert rules, and their unit tests pass', async (t) => {
  if (!promtool(t)) return;
  const config = run(['check', 'config', 'prometheus/prometheus.yml']);
  t.equal(config.status, 0, `promtool check config: ${config.stdout}${config.stderr}`);
  const tests = run(['test', 'rules', 'alerts.test.yml'], join(DEPLOY, 'prometheus'));
  t.equal(tests.status, 0, `promtool test rules: ${tests.stdout}${tests.stderr}`);
});

t.test('every dashboard query is valid PromQL', async (t) => {
  if (!promtool(t)) return;
  t.ok(dashboardQueries.length >= 15, `${dashboardQueries.length} queries`);
  // promtool parses expressions in rule files: each query becomes a recording rule.
  const rules = ['groups:', '  - name: dashboard', '    rules:'];
  dashboardQueries.forEach((q, k) => rules.push(`      - record: dashboard:query_${k}`, `        expr: ${JSON.stringify(asPromql(q.expr))}`));
  const file = join(tempDir(t), 'dashboard-rules.yml');
  writeFileSync(file, `${rules.join('\n')}\n`);
  const check = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
  t.equal(check.status, 0, `promtool check rules: ${check.stdout}${check.stderr}`);
});

t.test('every metric the dashboard and the alerts name is exported by the server', async (t) => {
  const srv = await startServer(t);
  const exported = new Set([...(await srv.get('/metrics')).text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap((m) => {
    const name = m[1] as string;
    return m[2] === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
  }));
  exported.add('up');
  const named = new Set([...dashboardQueries.map((q) => q.expr), ...alertQueries].flatMap(metricNames));
  t.equal(alertQueries.length, 8, 'the expressions of the 8 alerts were read');
  t.ok(named.size >= 15, `${named.size} metric names in the queries`);
  for (const name of named) t.ok(exported.has(name), `${name} is exported`);

  const inDashboard = dashboardQueries.map((q) => q.expr).join('\n');
  const inAlerts = alertQueries.join('\n');
  for (const [what, pattern] of [
    ['stream connections', /horologium_stream_connections/],
    ['the event rate', /rate\(horologium_events_appended_total/],
    ['4008 closes', /horologium_stream_closes_total\{code="4008"\}/],
    ['5xx replies', /horologium_http_requests_total\{status=~"5\.\."\}/],
    ['store latency', /horologium_store_commit_duration_seconds_bucket/],
    ['Redis errors', /horologium_redis_command_errors_total/],
  ] as const) {
    t.match(inDashboard, pattern, `the dashboard shows ${what}`);
    if (what !== 'stream connections' && what !== 'the event rate') t.match(inAlerts, pattern, `an alert watches ${what}`);
  }
});
