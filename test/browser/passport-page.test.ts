import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct,
  startTestControlPlane,
  type CallResult,
  type TestControlPlane,
} from '@dpp/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, launchChromium } from '../support/chromium.js';

/** A phone: iPhone 12/13 CSS viewport. */
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

function ok(r: CallResult, status: number, what: string): CallResult {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

describe('the passport a scanned label lands on, in headless Chromium', () => {
  let t: TestControlPlane;
  let browser: Browser;
  let phone: BrowserContext;
  const pageErrors: string[] = [];
  const key = () => t.tenants.a.admin;

  /** The documented journey over HTTP: product, ready_for_dpp, generate, publish, publish-dpp. */
  async function livePassport(
    serial: string,
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; gtin: string }> {
    const gtin = '09506000134352';
    const created = ok(
      await t.call('POST', '/api/v2/products', {
        key: key(),
        body: {
          name: 'Aurora X2 smartphone',
          description: 'A repairable smartphone with a replaceable battery and a six-year update promise.',
          category: 'electronics',
          gtin,
          serialNumber: serial,
          granularity: 'item',
          extensions: {
            energyEfficiencyClass: 'A',
            annualEnergyConsumptionKwh: 8.5,
            repairabilityScore: 8.2,
            weeeCategory: 'small_it_telecom',
            sparePartsAvailabilityYears: 7,
            recycledContentPercentage: 32,
          },
          customData: { erpCostCentre: 'CC-SECRET-991' },
          ...extra,
        },
      }),
      201,
      'create',
    );
    const id = created.body.id as string;
    for (const stage of ['validated', 'ready_for_dpp']) {
      ok(
        await t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, { key: key(), body: { stage } }),
        200,
        stage,
      );
    }
    ok(
      await t.call('POST', '/api/v2/dpp/generate', {
        key: key(),
        body: { productId: id },
        headers: { Prefer: 'wait=20' },
      }),
      200,
      'generate',
    );
    ok(
      await t.call('POST', `/api/v2/dpp/${id}/publish`, {
        key: key(),
        body: {
          amendmentReason: 'First publication for the launch',
          updates: {
            repair: {
              manualUrl: 'https://example.com/aurora/repair',
              spareParts: ['battery', 'display', 'back cover'],
            },
          },
        },
      }),
      201,
      'publish',
    );
    ok(
      await t.call('POST', `/api/v2/products/${id}/publish-dpp`, {
        key: key(),
        body: {},
        headers: { 'Idempotency-Key': randomUUID() },
      }),
      201,
      'publish-dpp',
    );
    return { id, gtin };
  }

  beforeAll(async () => {
    t = await startTestControlPlane();
    browser = await launchChromium();
    phone = await browser.newContext(PHONE);
    phone.on('page', (p) => {
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

  it('follows the resolver redirect to /p/{uid}, keeping the query and naming the scanned serial, and shows the public passport on a phone', async () => {
    const { id, gtin } = await livePassport('AX2-0001');
    const page = await phone.newPage();
    const response = await page.goto(`${t.url}/01/${gtin}/21/AX2-0001?src=qr`);
    expect(response!.status()).toBe(200);
    const redirect = response!.request().redirectedFrom();
    expect(redirect?.url()).toBe(`${t.url}/01/${gtin}/21/AX2-0001?src=qr`);
    expect((await redirect!.response())!.status()).toBe(302);
    const url = new URL(page.url());
    expect(url.pathname).toBe(`/p/${id}`);
    expect(url.search).toBe('?src=qr&serial=AX2-0001');

    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Aurora X2 smartphone');
    expect(await page.getByRole('status').first().innerText()).toBe('Active');
    const info = await page.getByRole('region', { name: 'Product information' }).innerText();
    expect(info).toContain('Energy efficiency class');
    expect(info).toContain('Repairability score');
    expect(info).toContain('8.5 kWh/annum');
    expect(info).toContain('32 %');
    const ids = await page.getByRole('region', { name: 'Identification' }).innerText();
    expect(ids).toContain(gtin);
    expect(ids).toContain('AX2-0001');
    expect(await page.getByRole('region', { name: 'Repair' }).innerText()).toContain('back cover');
    expect(await page.getByRole('region', { name: 'Verification' }).innerText()).toMatch(/did:key:z6Mk/);
    // Internal data never reaches the page.
    expect(await page.content()).not.toContain('CC-SECRET-991');

    // Readable on a phone: nothing wider than the screen, body text at least 16 px.
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      fontSize: parseFloat(getComputedStyle(document.body).fontSize),
    }));
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
    expect(layout.fontSize).toBeGreaterThanOrEqual(16);
    await shot(page, 'passport-phone');
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('answers JSON on the same URL to Accept: application/json, and the resolver linkset to a cross-origin scanner app', async () => {
    const { id, gtin } = await livePassport('AX2-0002');
    // The passport page allows no script (CSP default-src 'none'): ask from a same-origin document that does.
    const jsonPage = await phone.newPage();
    await jsonPage.goto(`${t.url}/.well-known/gs1resolver`);
    const same = await jsonPage.evaluate(async (target) => {
      const r = await fetch(target, { headers: { Accept: 'application/json' } });
      const html = await fetch(target, { headers: { Accept: 'text/html' } });
      return {
        status: r.status,
        type: r.headers.get('content-type'),
        vary: r.headers.get('vary'),
        body: (await r.json()) as { passportUid: string; sections: Record<string, unknown> },
        htmlType: html.headers.get('content-type'),
      };
    }, `/p/${id}`);
    expect(same.status).toBe(200);
    expect(same.type).toMatch(/^application\/json/);
    expect(same.vary).toBe('Accept');
    expect(same.htmlType).toMatch(/^text\/html/);
    expect(same.body.passportUid).toBe(id);
    expect(Object.keys(same.body.sections)).not.toContain('customData');
    await jsonPage.close();

    // Another origin (localhost vs 127.0.0.1): a scanner web app asks the resolver for its links, with a
    // custom header that makes Chromium send a CORS preflight first.
    const other = t.url.replace('127.0.0.1', 'localhost');
    const page = await phone.newPage();
    await page.goto(`${other}/.well-known/gs1resolver`);
    const cross = await page.evaluate(async (target) => {
      const r = await fetch(target, { headers: { Accept: 'application/linkset+json', 'X-Scanner': 'demo' } });
      return {
        status: r.status,
        link: r.headers.get('link'),
        body: (await r.json()) as { linkset: { anchor: string }[] },
      };
    }, `${t.url}/01/${gtin}/21/AX2-0002?linkType=all`);
    expect(cross.status).toBe(200);
    expect(cross.link).toContain('rel="linkset"');
    expect(cross.body.linkset[0]!.anchor).toBe(`${t.url}/01/${gtin}/21/AX2-0002`);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('names the item in hand: its serial, whether an enrolled device verified its label (with the proof), a void', async () => {
    // A model passport (its own serial field is '1') whose labels carry serials allocated by the print loop.
    const p = await printableProduct(t.call, key(), 4, { name: 'Aurora X2 model' });
    // Skip the first serial: on a fresh tenant it is 1, the model's own serial field too.
    const [sealed, unsealed, voided] = [p.serials[1]!, p.serials[2]!, p.serials[3]!];
    const other = (await printableProduct(t.call, key(), 1)).serials[0]!;
    const dev = await new HttpPrintDevice(t.call, await enrollTestDevice(t, key())).init();
    ok(
      await t.call('POST', '/api/v2/aidc/jobs', { key: key(), body: { gtin: p.gtin, serial: sealed } }),
      201,
      'job',
    );
    await dev.seal((await dev.claim())!);
    const sealedOn = new Date().toISOString().slice(0, 10);
    // An item product beside one allocated serial, voided.
    const item = ok(
      await t.call('POST', '/api/v2/products', {
        key: key(),
        body: {
          name: 'Aurora X2 unit',
          description: 'One unit of the model',
          category: 'electronics',
          gtin: p.gtin,
          serialNumber: voided,
          granularity: 'item',
          extensions: {
            energyEfficiencyClass: 'A',
            annualEnergyConsumptionKwh: 12,
            repairabilityScore: 7,
            weeeCategory: 'small_it_telecom',
          },
        },
      }),
      201,
      'item',
    );
    ok(
      await t.call('POST', `/api/v2/products/${item.body.id as string}/void`, {
        key: key(),
        body: { reason: 'Unit destroyed in transit' },
      }),
      200,
      'void',
    );

    const page = await phone.newPage();
    const serialOf = () => page.locator('dt:text-is("Serial number") + dd');
    const ids = page.getByRole('region', { name: 'Identification' });
    const response = await page.goto(`${t.url}/p/${p.productId}?serial=${sealed}`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await serialOf().innerText()).toBe(sealed);
    expect(await ids.innerText()).toContain(`/01/${p.gtin}/21/${sealed}`);
    expect(await ids.innerText()).toContain(
      `Label verified: printed, encoded, scanned back and sealed on ${sealedOn}.`,
    );
    const proof = ids.getByRole('link', { name: 'Proof' });
    expect(await proof.getAttribute('href')).toBe(`/api/v2/public/labels/${p.gtin}/${sealed}/proof`);
    expect(await page.getByRole('note').count()).toBe(0);
    await shot(page, 'passport-item-phone');

    await page.goto(`${t.url}/p/${p.productId}?serial=${unsealed}`);
    expect(await serialOf().innerText()).toBe(unsealed);
    expect(await ids.innerText()).toContain('Label not verified by an enrolled print device');
    expect(await ids.getByRole('link', { name: 'Proof' }).count()).toBe(0);

    await page.goto(`${t.url}/p/${p.productId}?serial=${voided}`);
    expect(await serialOf().innerText()).toBe(voided);
    expect(await page.getByRole('note').innerText()).toBe(
      `This item was voided by its publisher on ${sealedOn}.`,
    );

    // A serial that is not this product's (typed by anyone, or another product's) names no item; the page
    // is still served.
    for (const typed of ['999999999', '<b>1</b>', other]) {
      const r = await page.goto(`${t.url}/p/${p.productId}?serial=${encodeURIComponent(typed)}`);
      expect(r!.status()).toBe(200);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Aurora X2 model');
      expect(await serialOf().count()).toBe(0);
      expect(await ids.innerText()).not.toContain('Label');
    }
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('shows a voided label as gone (410) with its reason, and an unknown one as not found (404)', async () => {
    const { id, gtin } = await livePassport('AX2-0003');
    ok(
      await t.call('POST', `/api/v2/products/${id}/void`, {
        key: key(),
        body: { reason: 'Unit destroyed in transit' },
      }),
      200,
      'void',
    );
    const page = await phone.newPage();
    const gone = await page.goto(`${t.url}/01/${gtin}/21/AX2-0003`);
    expect(gone!.status()).toBe(410);
    expect(gone!.headers()['x-dpp-gone-reason']).toBe('serial_voided');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Passport no longer available');
    expect(await page.locator('main').innerText()).toContain('This item was voided by its publisher.');
    expect(await page.content()).not.toContain('Aurora X2');
    await shot(page, 'passport-gone-phone');
    const page2 = await phone.newPage();
    const missing = await page2.goto(`${t.url}/p/${randomUUID()}`);
    expect(missing!.status()).toBe(404);
    expect(await page2.getByRole('heading', { level: 1 }).innerText()).toBe('Passport not found');
    expect(pageErrors).toEqual([]);
    await page.close();
    await page2.close();
  });
});
