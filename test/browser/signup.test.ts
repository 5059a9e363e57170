import path from 'node:path';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, launchChromium } from '../support/chromium.js';

const EMAIL = `owner-${Date.now()}@example.com`;
const PASSWORD = 'a long enough password';

describe('the identity pages in headless Chromium', () => {
  let t: TestControlPlane;
  let browser: Browser;
  let context: BrowserContext;
  /** Script errors and CSP refusals; a page answering 400 or 409 on purpose is not one. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestControlPlane();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    context.on('page', (p) => {
      p.on('pageerror', (err) => pageErrors.push(err.message));
      p.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
          pageErrors.push(m.text());
      });
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });

  /** Clicks a submit button and returns the response to the form's POST. */
  async function submit(page: Page, button: string): Promise<Response> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.request().isNavigationRequest()),
      page.getByRole('button', { name: button, exact: true }).click(),
    ]);
    await page.waitForLoadState();
    return response;
  }

  const api = (key: string) => t.call('GET', '/api/v2/api-keys', { key });

  it('signs up, manages an API key through its whole life, signs out and in again', async () => {
    const page = await context.newPage();

    // Sign-up, with a validation error first.
    await page.goto(`${t.url}/`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.getByRole('link', { name: 'Create a workspace' }).click();
    await shot(page, 'signup');
    await page.getByLabel('Workspace name').fill('Acme Labels');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('short');
    const invalid = await submit(page, 'Create workspace');
    expect(invalid.status()).toBe(400);
    // Under Referrer-Policy: no-referrer, Chromium sends "Origin: null"; Fetch Metadata proves the origin.
    const sent = await invalid.request().allHeaders();
    expect(sent['sec-fetch-site']).toBe('same-origin');
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme Labels');
    expect(await page.getByRole('alert').innerText()).toContain('Password must be at least 10 characters');
    await shot(page, 'signup-errors');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel(/Sandbox workspace \(30 days\)/).check();
    const signedUp = await submit(page, 'Create workspace');
    expect(signedUp.status()).toBe(303);
    // Sign-up never signs in (a taken email must answer the same): it sends the new owner to sign in.
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(await page.getByRole('status').innerText()).toContain(
      'We sent a message to the address you entered',
    );
    expect(t.mail.map((m) => [m.to, m.subject])).toEqual([[EMAIL, 'Your DPP workspace is ready']]);
    await shot(page, 'signup-sent');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    expect((await submit(page, 'Sign in')).status()).toBe(303);
    expect(new URL(page.url()).pathname).toBe('/settings');
    const workspace = await page.getByRole('region', { name: 'Workspace' }).innerText();
    expect(workspace).toMatch(/Acme Labels/);
    expect(workspace).toMatch(/free/);
    expect(workspace).toMatch(/yes, expires \d{4}-\d{2}-\d{2}/);

    // Create a key with two chosen scopes; its secret is on the page once.
    await page.getByLabel('Key name').fill('ERP integration');
    await page.getByRole('checkbox', { name: /keys:manage/ }).check();
    await page.getByRole('checkbox', { name: /products:read/ }).check();
    const created = await submit(page, 'Create key');
    expect(created.status()).toBe(201);
    const secret = await page.getByRole('textbox', { name: 'API key secret' }).inputValue();
    expect(secret).toMatch(/^dpp_sk_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.locator('#copy-status').innerText()).toBe('Copied to the clipboard.');
    // A string expression: test/ compiles without the DOM library.
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await shot(page, 'settings-new-key');
    const firstId = (await page.locator('.secret code').innerText()).trim();

    const listed = await api(secret);
    expect(listed.status).toBe(200);
    const key = listed.body.data.find((k: { id: string }) => k.id === firstId);
    expect(key.scopes).toEqual(['keys:manage', 'products:read']);

    // Rotate: the old secret stops working, the new one works, and the id is new.
    const rotated = await submit(page, 'Rotate ERP integration');
    expect(rotated.status()).toBe(201);
    const newSecret = await page.getByRole('textbox', { name: 'API key secret' }).inputValue();
    const newId = (await page.locator('.secret code').innerText()).trim();
    expect(newSecret).not.toBe(secret);
    expect(newId).not.toBe(firstId);
    expect((await api(secret)).status).toBe(401);
    expect((await api(newSecret)).status).toBe(200);

    // Revoke in this tab, then again from a stale second tab: "already revoked", 409.
    const staleTab = await context.newPage();
    await staleTab.goto(`${t.url}/settings`);
    const revoked = await submit(page, 'Revoke ERP integration');
    expect(revoked.status()).toBe(303);
    expect(revoked.headers().location).toBe('/settings?notice=revoked');
    expect(await page.getByRole('status').first().innerText()).toContain('The key was revoked');
    expect((await api(newSecret)).status).toBe(401);
    const again = await submit(staleTab, 'Revoke ERP integration');
    expect(again.status()).toBe(409);
    expect(await staleTab.getByRole('alert').innerText()).toContain('already revoked');
    await shot(staleTab, 'settings-already-revoked');
    await staleTab.close();

    // Sign out, then sign in again and find the keys as they were.
    await submit(page, 'Sign out');
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.goto(`${t.url}/settings`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    const signedIn = await submit(page, 'Sign in');
    expect(signedIn.status()).toBe(303);
    expect(new URL(page.url()).pathname).toBe('/settings');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.allInnerTexts()).toEqual([
      expect.stringMatching(/ERP integration[\s\S]*revoked/), // newest first: the rotated-in key
      expect.stringMatching(/ERP integration[\s\S]*rotated/),
    ]);
    expect(await page.content()).not.toContain(newSecret);
    await shot(page, 'settings');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'settings-phone');

    expect(pageErrors).toEqual([]);
  }, 90_000);
});
