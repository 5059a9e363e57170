import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gtinFor, livePassport, readyProduct, generated, publish } from '@dpp/testkit/passports';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

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
    expect(r.headers.get('location')).toBe(`/p/${live.id}?utm_source=label&lang=fr`);
    const link = r.headers.get('link')!;
    expect(link).toContain(
      `<${t.url}/01/${live.gtin}/21/${live.serial}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
    );
    expect(link).toContain(`<${t.url}/p/${live.id}>; rel="https://gs1.org/voc/defaultLink"`);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const plain = await get(`/01/${live.gtin}/21/${live.serial}`);
    expect(plain.headers.get('location')).toBe(`/p/${live.id}`);
  });

  it('answers HEAD like GET, and OPTIONS with CORS', async () => {
    const head = await t.call('HEAD', `/01/${live.gtin}/21/${live.serial}`);
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe(`/p/${live.id}`);
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
    expect((await get(`/01/${live.gtin}/21/${live.serial}/`)).headers.get('location')).toBe(`/p/${live.id}`);
    for (const gtin of ['95010939', '036000291452', '4006381333931']) {
      const p = await livePassport(t, key(), ++n, { overrides: { gtin, serialNumber: `S${gtin.length}` } });
      const r = await get(`/01/${gtin}/21/S${gtin.length}`);
      expect(r.status, gtin).toBe(302);
      expect(r.headers.get('location')).toBe(`/p/${p.id}`);
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
                href: `${t.url}/p/${live.id}`,
                title: 'Digital Product Passport',
                type: 'text/html',
                hreflang: ['en'],
              },
            ],
            'https://gs1.org/voc/pip': [
              {
                href: `${t.url}/p/${live.id}`,
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
    expect(r.headers.get('location')).toBe(`/p/${p.id}`);
    // Voiding the product makes its labels gone too.
    await t.call('POST', `/api/v2/products/${p.id}/void`, { key: key(), body: { reason: 'Batch recalled' } });
    expect((await get(`/01/${p.body.gtin as string}/21/${serial}`)).body.error.code).toBe('SERIAL_VOIDED');
  });
});
