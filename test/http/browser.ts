// The web console as a user's browser shows it: Debian's Chromium (/usr/bin/chromium, installed by
// .ci/run) driven headless through playwright-core, with a throwaway profile. Outside CI a machine
// without it skips the browser checks; under CI=true a missing browser fails the test instead.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const browserPresent = existsSync(CHROMIUM);
/** For `test(..., { skip })`: why the browser checks cannot run here, or false. */
export const browserSkip: string | false = !browserPresent && process.env.CI !== 'true' ? `${CHROMIUM} is missing (apt-get install chromium); .ci/run installs it` : false;
/** Whether a test that checks more than the browser should also check the pages. */
export const browserWanted = browserPresent || process.env.CI === 'true';

export interface ConsoleBrowser { page: Page; pageErrors: string[]; close(): Promise<void> }

/** A browser with one page, its script errors collected; `close` also removes the profile. */
export async function openConsoleBrowser(viewport?: { width: number; height: number }): Promise<ConsoleBrowser> {
  assert.ok(browserPresent, `${CHROMIUM} is required under CI=true (.ci/run installs chromium)`);
  const profile = mkdtempSync(join(tmpdir(), 'logline-chromium-'));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  let browser;
  try {
    browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, ...(viewport ? { viewport } : {}) });
  } catch (e) {
    removeProfile();
    throw e;
  }
  const page = browser.pages()[0] ?? await browser.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  return { page, pageErrors, close: async () => { await browser.close(); removeProfile(); } };
}

/** Runs `fn` with a console page, closing the browser whatever happens. */
export async function withConsolePage<T>(fn: (page: Page, pageErrors: string[]) => Promise<T>, viewport?: { width: number; height: number }): Promise<T> {
  const b = await openConsoleBrowser(viewport);
  try {
    return await fn(b.page, b.pageErrors);
  } finally {
    await b.close();
  }
}
