import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gtinFor, livePassport, productBody, readyProduct, generated, publish } from '@dpp/testkit/passports';
import {
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

const CERTIFICATION_INFO = 'https://gs1.org/voc/certificationInfo';

/** The Link header a linkset names: the linkset itself, then each of its links in order. */
function linkHeaderOf(
  linkset: { anchor: string } & Record<string, { href: string; type: string }[] | string>,
) {
  const parts = [`<${linkset.anchor}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`];
  for (const [rel, links] of Object.entries(linkset)) {
    if (typeof links === 'string') continue;
    for (const l of links) parts.push(`<${l.href}>; rel="${rel}"; type="${l.type}"`);
  }
  return parts.join(', ');
}

describe.each(testDialects())('GS1 Digital Link resolver /01/{gtin}/21/{serial} (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 900;
  const key = () => t.tenants.a.admin;
  let live: { id: string; gtin: string; serial: string };
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const p = await livePassport(t, key(), ++n, { overrides: { serialNumber: 'SN/001' } });
    live = { id: p.id, gtin: p.body.gtin as string, serial: 'SN%2F001' };
  });
  afterAll(() => t?.close());
  const get = (path: string, headers: Record<string, string> = {}) => t.call('GET', path, { headers });

  it('redirects 302 to /p/{uid}, carrying the query string, with a Link header to the linkset', async () => {
    const r = await get(`/01/${live.gtin}/21/${live.serial}?utm_source=label&lang=fr`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe(`/p/${live.id}?utm_source=label&lang=fr&serial=SN%2F001`);
    const link = r.headers.get('link')!;
    expect(link).toContain(
      `<${t.url}/01/${live.gtin}/21/${live.serial}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
    );
    expect(link).toContain(`<${t.url}/p/${live.id}?serial=SN%2F001>; rel="https://gs1.org/voc/defaultLink"`);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const plain = await get(`/01/${live.gtin}/21/${live.serial}`);
    expect(plain.headers.get('location')).toBe(`/p/${live.id}?serial=SN%2F001`);
    // The Link header names every link of the linkset, in its order, on the redirect and the linkset alike.
    const all = await get(`/01/${live.gtin}/21/${live.serial}?linkType=all`);
    expect(link).toBe(linkHeaderOf(all.body.linkset[0]));
    expect(all.headers.get('link')).toBe(link);
  });

  it('answers HEAD like GET, and OPTIONS with CORS', async () => {
    const head = await t.call('HEAD', `/01/${live.gtin}/21/${live.serial}`);
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe(`/p/${live.id}?serial=SN%2F001`);
    expect(head.text).toBe('');
    const options = await t.call('OPTIONS', `/01/${live.gtin}/21/${live.serial}`, {
      headers: {
        Origin: 'https://scanner.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'accept',
      },
    });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-origin')).toBe('*');
    expect(options.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    expect(options.headers.get('access-control-allow-headers')).toBe('accept');
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const badHead = await t.call('HEAD', `/01/${live.gtin}/21/${'X'.repeat(21)}`);
    expect(badHead.status).toBe(400);
  });

  it('tolerates a trailing slash and pads GTIN-8/12/13 keys to 14 digits', async () => {
    expect((await get(`/01/${live.gtin}/21/${live.serial}/`)).headers.get('location')).toBe(
      `/p/${live.id}?serial=SN%2F001`,
    );
    for (const gtin of ['95010939', '036000291452', '4006381333931']) {
      const p = await livePassport(t, key(), ++n, { overrides: { gtin, serialNumber: `S${gtin.length}` } });
      const r = await get(`/01/${gtin}/21/S${gtin.length}`);
      expect(r.status, gtin).toBe(302);
      expect(r.headers.get('location')).toBe(`/p/${p.id}?serial=S${gtin.length}`);
      const ls = await get(`/01/${gtin}/21/S${gtin.length}?linkType=all`);
      expect(ls.body.linkset[0].anchor).toBe(`${t.url}/01/${gtin.padStart(14, '0')}/21/S${gtin.length}`);
    }
  });

  it('answers linkType=all, linkType=linkset and Accept: application/linkset+json with the RFC 9264 linkset', async () => {
    for (const [q, headers] of [
      ['?linkType=all', {}],
      ['?linkType=linkset', {}],
      ['', { Accept: 'application/linkset+json' }],
    ] as const) {
      const r = await get(`/01/${live.gtin}/21/${live.serial}${q}`, headers);
      expect(r.status, q).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
      expect(r.headers.get('link')).toContain('rel="linkset"');
      expect(r.body).toEqual({
        linkset: [
          {
            anchor: `${t.url}/01/${live.gtin}/21/${live.serial}`,
            'https://gs1.org/voc/defaultLink': [
              {
                href: `${t.url}/p/${live.id}?serial=SN%2F001`,
                title: 'Digital Product Passport',
                type: 'text/html',
                hreflang: ['en'],
              },
            ],
            'https://gs1.org/voc/pip': [
              {
                href: `${t.url}/p/${live.id}?serial=SN%2F001`,
                title: 'Digital Product Passport',
                type: 'text/html',
                hreflang: ['en'],
              },
              {
                href: `${t.url}/api/v2/public/passport/${live.id}`,
                title: 'Digital Product Passport (JSON)',
                type: 'application/json',
              },
            ],
          },
        ],
      });
    }
    // A specific link type goes to that link (here the default one).
    expect((await get(`/01/${live.gtin}/21/${live.serial}?linkType=gs1:pip`)).status).toBe(302);
  });

  it('describes itself at /.well-known/gs1resolver', async () => {
    const r = await get('/.well-known/gs1resolver');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      resolverRoot: t.url,
      supportedPrimaryKeys: ['01'],
      linkTypeAllSupported: true,
    });
    expect(r.body.supportedLinkType[0]).toMatchObject({ namespace: 'https://gs1.org/voc/', prefix: 'gs1:' });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each([
    ['a bad check digit', '/01/4006381333932/21/1', 'INVALID_GTIN'],
    ['letters in the GTIN', '/01/40063813339AB/21/1', 'INVALID_GTIN'],
    ['a GTIN of 11 digits', '/01/12345678901/21/1', 'INVALID_GTIN'],
    ['a serial of 21 characters', `/01/${gtinFor(1)}/21/${'A'.repeat(21)}`, 'INVALID_SERIAL'],
    ['a serial outside character set 82', `/01/${gtinFor(1)}/21/A%23B`, 'INVALID_SERIAL'],
    ['a malformed escape', `/01/${gtinFor(1)}/21/A%2`, 'INVALID_SERIAL'],
  ])('answers 400 for %s', async (_name, path, code) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(code);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers 404 PRODUCT_NOT_FOUND for a GTIN no product carries, 404 PASSPORT_NOT_FOUND for an unpublished or unregistered item', async () => {
    const unknown = await get(`/01/${gtinFor(99999)}/21/1`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('PRODUCT_NOT_FOUND');
    // Known GTIN, serial of nothing.
    expect((await get(`/01/${live.gtin}/21/NOPE`)).body.error.code).toBe('PASSPORT_NOT_FOUND');
    // A product that is only ready_for_dpp, one generated, one published but not registered.
    const ready = await readyProduct(t, key(), ++n);
    const gen = await readyProduct(t, key(), ++n);
    await generated(t, key(), gen.id);
    const pub = await readyProduct(t, key(), ++n);
    await generated(t, key(), pub.id);
    await publish(t, key(), pub.id);
    for (const p of [ready, gen, pub]) {
      const r = await get(`/01/${p.body.gtin as string}/21/${p.body.serialNumber as string}`);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('PASSPORT_NOT_FOUND');
    }
  });

  it('answers 410 SERIAL_VOIDED with a tombstone and no passport content for a voided item', async () => {
    const p = await livePassport(t, key(), ++n, { overrides: { granularity: 'item' } });
    await t.call('POST', `/api/v2/products/${p.id}/void`, {
      key: key(),
      body: { reason: 'Label destroyed' },
    });
    const r = await get(`/01/${p.body.gtin as string}/21/${p.body.serialNumber as string}`);
    expect(r.status).toBe(410);
    expect(r.body.error.code).toBe('SERIAL_VOIDED');
    expect(r.body.error.details.tombstone).toMatchObject({
      gtin: p.body.gtin,
      serial: p.body.serialNumber,
      status: 'voided',
    });
    expect(r.headers.get('x-dpp-gone-reason')).toBe('serial_voided');
    expect(r.text).not.toContain(p.body.name as string);
    expect(r.text).not.toContain('sections');
  });

  it('answers 404 PASSPORT_AMBIGUOUS when the key matches registered passports of two tenants', async () => {
    const overrides = { gtin: '09506000134376', serialNumber: 'TWIN' };
    await livePassport(t, key(), ++n, { overrides });
    expect((await get('/01/09506000134376/21/TWIN')).status).toBe(302);
    await livePassport(t, t.tenants.b.admin, ++n, { overrides });
    const r = await get('/01/09506000134376/21/TWIN');
    expect(r.status).toBe(404);
    expect(r.body.error).toEqual({
      code: 'PASSPORT_AMBIGUOUS',
      message: 'This code matches more than one published passport',
    });
  });

  it('resolves a serial allocated by the print loop (a printed label) to its product', async () => {
    const p = await livePassport(t, key(), ++n);
    const batch = await t.call('POST', '/api/v2/carriers/batch', {
      key: key(),
      body: { productId: p.id, count: 3 },
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(batch.status).toBe(201);
    const serial = String(batch.body.serials[1]);
    const r = await get(`/01/${p.body.gtin as string}/21/${serial}`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe(`/p/${p.id}?serial=${serial}`);
    // Voiding the product makes its labels gone too.
    await t.call('POST', `/api/v2/products/${p.id}/void`, { key: key(), body: { reason: 'Batch recalled' } });
    expect((await get(`/01/${p.body.gtin as string}/21/${serial}`)).body.error.code).toBe('SERIAL_VOIDED');
  });

  it('resolves serials registered for printing (letters, a leading zero) as it resolves allocated ones', async () => {
    const p = await livePassport(t, key(), ++n);
    const gtin = p.body.gtin as string;
    const batch = await t.call('POST', '/api/v2/carriers/batch', {
      key: key(),
      body: { productId: p.id, serials: ['AB-12', '007'] },
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(batch.status).toBe(201);
    const allocated = await t.call('POST', '/api/v2/carriers/batch', {
      key: key(),
      body: { productId: p.id, count: 2 },
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(allocated.status).toBe(201);
    for (const serial of ['AB-12', '007', ...(allocated.body.serials as string[])]) {
      const r = await get(`/01/${gtin}/21/${serial}`);
      expect({ serial, status: r.status }).toEqual({ serial, status: 302 });
      expect(r.headers.get('location')).toBe(`/p/${p.id}?serial=${serial}`);
    }
    // Texts that only look like a registered serial are not its label.
    for (const serial of ['07', '0007', 'AB-1']) {
      const r = await get(`/01/${gtin}/21/${serial}`);
      expect({ serial, status: r.status, code: r.body.error?.code }).toEqual({
        serial,
        status: 404,
        code: 'PASSPORT_NOT_FOUND',
      });
    }
    // A serial of twenty digits is a valid AI (21) but no number the counter gives: not found, on either database.
    const long = await get(`/01/${gtin}/21/12345678901234567890`);
    expect(long.status).toBe(404);
    expect(long.body.error.code).toBe('PASSPORT_NOT_FOUND');
  });

  it("carries the scanned serial to the page, which names it only when it is the product's", async () => {
    // A model's labels carry serials allocated by the print loop; the model's own serial field is '1'.
    const p = await printableProduct(t.call, key(), 2);
    const other = await printableProduct(t.call, key(), 1);
    const serial = p.serials[1]!; // never 1, the model's own serial field
    const r = await get(`/01/${p.gtin}/21/${serial}?src=qr&serial=1`);
    expect(r.status).toBe(302);
    // The query is kept, and the scanned serial replaces the one it named.
    expect(r.headers.get('location')).toBe(`/p/${p.productId}?src=qr&serial=${serial}`);
    const page = await t.call('GET', r.headers.get('location')!);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<dd>${serial}</dd>`);
    expect(page.text).not.toContain('<dd>1</dd>');
    expect(page.text).toContain('Label not verified by an enrolled print device');
    // Anyone can type a URL: a serial of another product, of none, or not a serial at all names no item.
    for (const typed of [other.serials[0]!, '999999999', '<b>1</b>', 'X'.repeat(21)]) {
      const q = await t.call('GET', `/p/${p.productId}?serial=${encodeURIComponent(typed)}`);
      expect(q.status, typed).toBe(200);
      expect(q.text).not.toContain('Serial number');
      expect(q.text).not.toContain('Label not verified');
      expect(q.text).not.toContain('&lt;b&gt;');
    }
  });

  it("offers a sealed label's proof as gs1:certificationInfo, in the linkset and the Link header", async () => {
    const p = await printableProduct(t.call, key(), 2);
    const [serial, unsealed] = [p.serials[0]!, p.serials[1]!];
    const path = `/api/v2/public/labels/${p.gtin}/${serial}/proof`;
    const before = await get(`/01/${p.gtin}/21/${serial}?linkType=all`);
    expect(Object.keys(before.body.linkset[0])).not.toContain(CERTIFICATION_INFO);
    expect(before.headers.get('link')).not.toContain(CERTIFICATION_INFO);
    // Not offered yet: the link type goes to the page.
    expect(
      (await get(`/01/${p.gtin}/21/${serial}?linkType=gs1:certificationInfo`)).headers.get('location'),
    ).toBe(`/p/${p.productId}?linkType=gs1:certificationInfo&serial=${serial}`);

    // An enrolled device prints, encodes, scans back and seals the label.
    const dev = await new HttpPrintDevice(t.call, await enrollTestDevice(t, key())).init();
    const job = await t.call('POST', '/api/v2/aidc/jobs', { key: key(), body: { gtin: p.gtin, serial } });
    expect(job.status, job.text).toBe(201);
    await dev.seal((await dev.claim())!);

    const after = await get(`/01/${p.gtin}/21/${serial}?linkType=all`);
    expect(after.body.linkset[0][CERTIFICATION_INFO]).toEqual([
      { href: `${t.url}${path}`, title: 'Label proof', type: 'application/json' },
    ]);
    const redirect = await get(`/01/${p.gtin}/21/${serial}`);
    expect(redirect.headers.get('link')).toContain(
      `<${t.url}${path}>; rel="${CERTIFICATION_INFO}"; type="application/json"`,
    );
    expect(redirect.headers.get('link')).toBe(linkHeaderOf(after.body.linkset[0]));
    expect(after.headers.get('link')).toBe(redirect.headers.get('link'));
    for (const linkType of ['gs1:certificationInfo', encodeURIComponent(CERTIFICATION_INFO)]) {
      const r = await get(`/01/${p.gtin}/21/${serial}?linkType=${linkType}`);
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe(path);
    }
    // The page of the sealed label says so and links to its proof.
    const page = await t.call('GET', redirect.headers.get('location')!);
    expect(page.text).toContain('Label verified: printed, encoded, scanned back and sealed on');
    expect(page.text).toContain(`href="${path}"`);
    // Another label of the same product was never sealed: no proof.
    const other = await get(`/01/${p.gtin}/21/${unsealed}?linkType=all`);
    expect(Object.keys(other.body.linkset[0])).not.toContain(CERTIFICATION_INFO);
    expect((await t.call('GET', `/p/${p.productId}?serial=${unsealed}`)).text).toContain(
      'Label not verified by an enrolled print device',
    );
    expect((await get('/.well-known/gs1resolver')).body.linkTypes).toContain('gs1:certificationInfo');
  });

  it("shows the item in hand's void and market status on the page of its model", async () => {
    const p = await printableProduct(t.call, key(), 2);
    const [voided, recalled] = [p.serials[0]!, p.serials[1]!];
    // An item product beside the model's allocated serial, voided.
    const item = await t.call('POST', '/api/v2/products', {
      key: key(),
      body: { ...productBody(++n), gtin: p.gtin, serialNumber: voided, granularity: 'item' },
    });
    expect(item.status, item.text).toBe(201);
    const v = await t.call('POST', `/api/v2/products/${item.body.id as string}/void`, {
      key: key(),
      body: { reason: 'Label destroyed' },
    });
    expect(v.status, v.text).toBe(200);
    const r = await get(`/01/${p.gtin}/21/${voided}`);
    expect(r.headers.get('location')).toBe(`/p/${p.productId}?serial=${voided}`);
    const page = await t.call('GET', r.headers.get('location')!);
    expect(page.status).toBe(200);
    expect(page.text).toContain('This item was voided by its publisher on');
    // An item passport (not registered) beside another serial, recalled.
    const ip = await livePassport(t, key(), ++n, {
      register: false,
      overrides: { gtin: p.gtin, serialNumber: recalled, granularity: 'item' },
    });
    const market = `/api/v2/backup/passport/${ip.id}/market-status`;
    for (const body of [{ status: 'placed_on_market' }, { status: 'recalled', reason: 'Battery swelling' }]) {
      const m = await t.call('POST', market, { key: key(), body });
      expect(m.status, m.text).toBe(201);
    }
    const recalledPage = await t.call('GET', `/p/${p.productId}?serial=${recalled}`);
    expect(recalledPage.text).toContain('This product was recalled on');
    expect(recalledPage.text).toContain('Battery swelling');
    expect(recalledPage.text).not.toContain('This item was voided');
    // The model's page without an item says neither.
    const plain = await t.call('GET', `/p/${p.productId}`);
    expect(plain.text).not.toContain('This product was recalled');
    expect(plain.text).not.toContain('Serial number');
  });
});
