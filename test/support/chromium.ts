import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium; tests never download a browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Where page screenshots go (git-ignored). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

/**
 * Launches headless Chromium, or fails with the one line that fixes it: a browser test that cannot
 * run must not pass silently.
 */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}; the browser tests need it. ` +
        'Install it with: apt-get update && apt-get install -y chromium (CI installs it).',
    );
  }
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
