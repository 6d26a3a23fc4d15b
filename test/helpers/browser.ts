/**
 * Debian's Chromium driven by playwright-core (never a browser download), and a panel build of the
 * test's own. Where /usr/bin/chromium is missing the browser tests skip with a message, except in
 * CI (CI=true), where they fail: .ci/run installs it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser } from 'playwright-core';
import { tempDir } from './server.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser, or undefined after t.skip / t.fail when it cannot run here. */
export async function launchChromium(t: Test): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') t.fail(`${CHROMIUM} is missing: CI must install Debian's chromium package`);
    else t.comment(`SKIP: ${CHROMIUM} is missing (apt-get install -y chromium): browser tests did not run`);
    return undefined;
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Builds the panel into a temporary directory and returns it (for Config.panelDir). */
export async function builtPanel(t: Test): Promise<string> {
  const dir = join(tempDir(t), 'panel');
  const { buildPanel } = (await import('../../scripts/build-panel.mjs')) as { buildPanel(dir: string): Promise<void> };
  await buildPanel(dir);
  return dir;
}
