/**
 * Debian's Chromium driven by playwright-core (never a browser download), and a panel build of the
 * test's own. Where /usr/bin/chromium is missing the browser tests skip with a message, except in
 * CI (CI=true), where they fail: .ci/run installs it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser } from 'playwright-core';
import { buildPanel } from '../../scripts/build-panel.mjs';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser, or undefined (after a SKIP comment, or t.fail in CI) when it cannot run here. */
export async function launchChromium(t: Test, extraArgs: string[] = []): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') t.fail(`${CHROMIUM} is missing: CI must install Debian's chromium package`);
    else t.comment(`SKIP: ${CHROMIUM} is missing (apt-get install -y chromium): browser tests did not run`);
    return undefined;
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
  t.teardown(() => browser.close());
  return browser;
}

let build: Promise<string> | undefined;

/**
 * The panel built from the sources into a temporary directory (for Config.panelDir): once per test
 * process, since every test of a file serves the same build; removed when the process exits.
 */
export function builtPanel(): Promise<string> {
  build ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'horologium-panel-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await buildPanel(dir);
    return dir;
  })();
  return build;
}
