/**
 * The security advisory feed as a web page on another origin reads it in Chromium (CORS, the preflight, the
 * per-IP budget and its headers), and as security tooling reads it with curl.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';

const run = promisify(execFile);
const BUDGET = 8;

describe('the security advisory feed from a browser page and from curl', () => {
  let t: TestControlPlane;
  let browser: Browser;
  let page: http.Server;
  let pageOrigin = '';
  let feed = '';

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect: 'sqlite',
      env: { IP_RATE_LIMITS: `advisories=${BUDGET}/60` },
    });
    const published = await t.call('POST', '/api/v2/security-advisories', {
      key: t.tenants.a.admin,
      body: {
        title: 'Resolver page reflects a query parameter',
        summary: 'The consumer page before 1.2 reflects the lang parameter unescaped.',
        severity: 'medium',
        affectedProducts: [{ name: 'Consumer page', version: '< 1.2' }],
        remediation: { category: 'vendor_fix', details: 'Fixed in 1.2; nothing to do.' },
      },
    });
    expect(published.status, published.text).toBe(201);
    const doc = new URL(published.body.data.csafUrl).pathname;
    feed = `${t.url}${doc.slice(0, doc.lastIndexOf('/'))}`;
    // Another origin: a page of a security tool's web UI.
    page = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>Advisory reader</title><p>reader</p>');
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => page?.close(r));
    await t?.close();
  });

  it('is read cross-origin, through a preflight, until the per-IP budget is spent; the 429 is readable too', async () => {
    const tab = await browser.newPage();
    await tab.goto(`${pageOrigin}/`);
    const seen = await tab.evaluate(
      async ({ url, budget }) => {
        const out: {
          status: number;
          entries?: number;
          remaining: string | null;
          retryAfter: string | null;
        }[] = [];
        for (let i = 0; i <= budget; i++) {
          // A header outside the CORS safelist makes the browser send a preflight first.
          const r = await fetch(url, { headers: { 'X-Requested-With': 'advisory-reader' } });
          const body = (await r.json()) as { feed?: { entry: unknown[] } };
          out.push({
            status: r.status,
            ...(body.feed ? { entries: body.feed.entry.length } : {}),
            remaining: r.headers.get('X-RateLimit-Remaining'),
            retryAfter: r.headers.get('Retry-After'),
          });
        }
        return out;
      },
      { url: feed, budget: BUDGET },
    );
    expect(seen.slice(0, BUDGET).map((s) => [s.status, s.entries])).toEqual(
      Array.from({ length: BUDGET }, () => [200, 1]),
    );
    expect(seen[0]!.remaining).toBe(String(BUDGET - 1));
    const over = seen[BUDGET]!;
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    await tab.close();
  });

  it('answers curl with the feed, its CORS and rate-limit headers, and the preflight with 204', async () => {
    const other = { 'X-Forwarded-For': '198.51.100.77' }; // its own budget behind the (loopback) proxy
    const got = await run('curl', ['-sS', '-i', '-H', `X-Forwarded-For: ${other['X-Forwarded-For']}`, feed]);
    const [head, body] = got.stdout.split(/\r?\n\r?\n/, 2) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/^access-control-allow-origin: \*$/im);
    expect(head).toMatch(new RegExp(`^x-ratelimit-limit: ${BUDGET}$`, 'im'));
    expect(JSON.parse(body).feed.entry).toHaveLength(1);
    const preflight = await run('curl', [
      '-sS',
      '-i',
      '-X',
      'OPTIONS',
      '-H',
      'Origin: https://tool.example',
      '-H',
      'Access-Control-Request-Method: GET',
      feed,
    ]);
    expect(preflight.stdout).toMatch(/^HTTP\/1\.1 204/);
    expect(preflight.stdout).toMatch(/^access-control-allow-methods: .*GET/im);
  });
});
