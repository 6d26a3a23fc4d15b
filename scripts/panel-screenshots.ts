// Screenshots of the panel for the README (docs/panel-*.png): a real server on the memory store,
// a few sessions of tool activity, and Debian's Chromium in light and dark.
// Run: npm run build && npx tsx scripts/panel-screenshots.ts
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { testConfig } from '../test/helpers/config.js';

const app = await buildApp(testConfig({ store: 'memory:' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address() as { port: number };
const base = `http://127.0.0.1:${address.port}`;
const post = (path: string, body: unknown) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

for (const s of ['nightly-refactor', 'ci:flaky-test-hunt', 'support:ticket-4412']) await post(`/v1/sessions/${s}/events`, { type: 'run_started', data: { model: 'gpt-5', user: 'ada' } });
const session = 'agent-run-7';
await post(`/v1/sessions/${session}/tool-calls`, { call_id: 'call_01', name: 'read_file', args: { path: 'src/store/ledger.ts' } });
await post(`/v1/sessions/${session}/tool-results`, {
  call_id: 'call_01',
  name: 'read_file',
  execution_time: 0.004,
  result: { path: 'src/store/ledger.ts', range: [1, 6], content: "/** The call ledger: one row per call_id. */\nexport interface LedgerRow {\n  callId: string;\n  queueSeq: number;\n  eventSeq: number;\n}\n" },
});
await post(`/v1/sessions/${session}/tool-calls`, { call_id: 'call_02', name: 'grep', args: { pattern: 'queueSeq', path: 'src' } });
await post(`/v1/sessions/${session}/tool-results`, { call_id: 'call_02', name: 'grep', execution_time: 0.087, result: { content: 'src/store/ledger.ts:4:  queueSeq: number;\nsrc/store/sqlite.ts:88:    queueSeq: row.queue_seq,\nsrc/routes/queue.ts:41:  const queueSeq = entry.seq;' } });
await post(`/v1/sessions/${session}/tool-calls`, { call_id: 'call_03', name: 'run_tests', args: { filter: 'ledger' } });
await post(`/v1/sessions/${session}/tool-results`, { call_id: 'call_03', name: 'run_tests', execution_time: 3.42, is_error: true, result: 'FAIL test/ledger.test.ts\n  expected queueSeq 3, got 2' });
await post(`/v1/sessions/${session}/events`, { type: 'thinking', data: { text: 'The sqlite writer numbers the queue before the ledger insert.' } });
await post(`/v1/sessions/${session}/tool-results`, { call_id: 'call_05', name: 'patch_file', execution_time: 0.021, result: { ok: true, hunks: 2, added: 14, removed: 3 } });
await post(`/v1/sessions/${session}/tool-calls`, { call_id: 'call_04', name: 'apply_patch', args: { file: 'src/store/sqlite-writer.ts' } });

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
for (const colorScheme of ['light', 'dark'] as const) {
  const page = await browser.newPage({ colorScheme, viewport: { width: 1180, height: 760 } });
  await page.goto(`${base}/#/sessions/${session}`);
  await page.locator('.card[data-call-id="call_04"]').waitFor();
  await page.screenshot({ path: `docs/panel-${colorScheme}.png` });
  if (colorScheme === 'light') {
    await page.goto(`${base}/`);
    await page.locator('.session-item').first().waitFor();
    await page.fill('#session-filter', 'agent');
    await page.waitForTimeout(300);
    await page.fill('#session-filter', '');
    await page.waitForTimeout(300);
    await page.screenshot({ path: 'docs/panel-list.png' });
  }
  await page.close();
}
// A phone: the session, with the list as a drawer behind the top bar's button.
const phone = await browser.newPage({ colorScheme: 'light', viewport: { width: 400, height: 820 } });
await phone.goto(`${base}/#/sessions/${session}`);
await phone.locator('.card[data-call-id="call_04"]').waitFor();
await phone.screenshot({ path: 'docs/panel-narrow.png' });
await phone.close();
await browser.close();
await app.close();
