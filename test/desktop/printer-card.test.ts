/**
 * The console's printer card in headless Chromium, against the page the agent serves with a backend that
 * answers a fixed status: a printer whose worker claims one label earlier since the printer waited for a label
 * says so, and one that never waited says nothing of it; each says how its scanner's window is used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { silentLogger, startConsoleServer, type ConsoleBackend, type ConsoleServer } from '@dpp/agent';
import { launchChromium } from '../support/chromium.js';

const WAITED_AT = '2026-11-28T09:41:07.000Z';

function printer(
  name: string,
  printerWaitedAt: string | null,
  scanWindow = { labelMs: 473, scanMs: 21, queuesAhead: true },
  waits = { agent: { labels: 0, ms: 0 }, scan: { labels: 0, ms: 0 } },
) {
  return {
    name,
    language: 'zpl',
    transport: 'serial',
    target: `/dev/pts/${name.length}`,
    rfid: true,
    nfc: false,
    scanner: '/dev/pts/9',
    state: 'ready',
    detail: null,
    status: null,
    currentJob: null,
    statusAt: WAITED_AT,
    printerWaitedAt,
    scanWindow,
    waits,
  };
}

const backend: ConsoleBackend = {
  status: () => ({
    agentVersion: '0.0.0-test',
    startedAt: WAITED_AT,
    device: { id: 'dev_1', name: 'line-1', tenantId: 'ten_1', site: null },
    connections: {
      controlPlane: { url: 'http://127.0.0.1:9', reachable: true },
      mqtt: { state: 'connected' },
    },
    printers: [
      printer('zebra-1', WAITED_AT),
      printer(
        'zebra-2',
        null,
        { labelMs: 100, scanMs: 60.4, queuesAhead: false },
        { agent: { labels: 1, ms: 18 }, scan: { labels: 12, ms: 2410 } },
      ),
    ],
    jobs: { current: [], recent: [] },
    outbox: { pending: 0, delivered: 0, rejected: 0 },
  }),
  metrics: () => '',
  job: () => null,
  preview: () => null,
  currentAttempt: () => null,
  attest: () => undefined,
  fail: () => undefined,
  reprint: () => undefined,
  scan: () => undefined,
  subscribe: () => () => undefined,
};

describe('the console printer card', () => {
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    server = await startConsoleServer({ backend, host: '127.0.0.1', port: 0, log: silentLogger });
    browser = await launchChromium();
    page = await browser.newPage({ timezoneId: 'UTC' });
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(`${server.url}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('says when the printer waited for a label and that the next job is claimed earlier since', async () => {
    const note = page.locator('[data-printer="zebra-1"] [data-role="claims-early"]');
    await expect.poll(() => note.textContent()).toContain('claimed as soon as the label before is sent');
    expect(await note.textContent()).toContain('09:41:07');
    await expect.poll(() => page.locator('[data-printer="zebra-2"]').count()).toBe(1);
    expect(await page.locator('[data-printer="zebra-2"] [data-role="claims-early"]').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('says whether the next label waits in the printer or until the one before is read, and why', async () => {
    const window = (name: string) => page.locator(`[data-printer="${name}"] [data-role="scan-window"]`);
    await expect
      .poll(() => window('zebra-1').textContent())
      .toBe('next label queued behind the one printing (scan 21 ms of a 473 ms label)');
    expect(await window('zebra-2').textContent()).toBe(
      'each label sent once the one before is read (scan 60 ms of a 100 ms label)',
    );
  });

  it('says how often the printer stood empty with its next label claimed, and only once it has', async () => {
    const waits = (name: string) => page.locator(`[data-printer="${name}"] [data-role="printer-waits"]`);
    await expect
      .poll(() => waits('zebra-2').textContent())
      .toBe('1 label on the agent (0.0 s), 12 labels on a scan (2.4 s)');
    expect(await waits('zebra-1').count()).toBe(0);
  });
});
