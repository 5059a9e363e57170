import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generated, livePassport, publish, readyProduct, register } from '@dpp/testkit/passports';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

function rootFrom(name: string, content: unknown, path: { side: string; hash: string }[]): string {
  let h = createHash('sha256')
    .update(Buffer.from([0]))
    .update(canonicalJson({ name, content }))
    .digest();
  for (const step of path) {
    const s = Buffer.from(step.hash, 'hex');
    h = createHash('sha256')
      .update(Buffer.from([1]))
      .update(step.side === 'left' ? s : h)
      .update(step.side === 'left' ? h : s)
      .digest();
  }
  return h.toString('hex');
}

describe.each(testDialects())('GET /api/v2/public/passport/{uid} (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 800;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());
  const get = (uid: string) => t.call('GET', `/api/v2/public/passport/${uid}`);

  it('serves a published passport without a credential: public sections only, each provable against the merkleRoot', async () => {
    const p = await livePassport(t, key(), ++n, {
      overrides: { customData: { erpId: 'SAP-42', margin: 0.31 } },
      publish: {
        updates: { supplyChain: { smelter: 'Plant 7' }, repair: { score: 8 } },
        disclosure: { supplyChain: 'partner' },
      },
    });
    const r = await get(p.id);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.body).toMatchObject({
      passportUid: p.id,
      state: 'draft',
      registered: true,
      publisher: { name: 'Tenant A' },
    });
    expect(Object.keys(r.body.sections).sort()).toEqual([
      'attributes',
      'credentials',
      'identifiers',
      'product',
      'repair',
    ]);
    expect(r.body.disclosure).toEqual({ tier: 'public', withheldSections: 2 });
    expect(r.text).not.toContain('SAP-42');
    expect(r.text).not.toContain('Plant 7');
    for (const [name, content] of Object.entries(r.body.sections)) {
      expect(rootFrom(name, content, r.body.proofs[name].path)).toBe(r.body.version.merkleRoot);
    }
    // The same root the authenticated history shows.
    const history = await t.call('GET', `/api/v2/passports/${p.id}/history`, { key: key() });
    expect(history.body.versions[0].merkleRoot).toBe(r.body.version.merkleRoot);
  });

  it('serves the current version: a republish is visible at once', async () => {
    const p = await livePassport(t, key(), ++n);
    expect(
      (
        await publish(t, key(), p.id, {
          amendmentReason: 'Second version of the passport',
          updates: { repair: { score: 3 } },
        })
      ).status,
    ).toBe(201);
    const r = await get(p.id);
    expect(r.body.version.version).toBe(2);
    expect(r.body.sections.repair).toEqual({ score: 3 });
  });

  it('is 404 PASSPORT_NOT_FOUND for a draft (generated, never published), a product with no passport, and an unknown id', async () => {
    const generatedOnly = await readyProduct(t, key(), ++n);
    await generated(t, key(), generatedOnly.id);
    const plain = await readyProduct(t, key(), ++n);
    for (const uid of [generatedOnly.id, plain.id, randomUUID(), 'not-a-uid']) {
      const r = await get(uid);
      expect(r.status, uid).toBe(404);
      expect(r.body.error, uid).toEqual({
        code: 'PASSPORT_NOT_FOUND',
        message: 'No passport is published under this id',
      });
    }
  });

  it('accepts the element string 01<gtin14>21<serial> as uid, and answers 404 PASSPORT_AMBIGUOUS when it matches passports of two tenants', async () => {
    const body = { gtin: '09506000134352', serialNumber: 'AMB-1' };
    const a = await livePassport(t, key(), ++n, { overrides: body });
    const byCode = await get('010950600013435221AMB-1');
    expect(byCode.status).toBe(200);
    expect(byCode.body.passportUid).toBe(a.id);
    // The same passport as by its uid, its publisher (read apart from the key lookup) included.
    expect(byCode.body.publisher.name).toBe('Tenant A');
    expect(byCode.text).toBe((await get(a.id)).text);
    await livePassport(t, t.tenants.b.admin, ++n, { overrides: body });
    const r = await get('010950600013435221AMB-1');
    expect(r.status).toBe(404);
    expect(r.body.error).toEqual({
      code: 'PASSPORT_AMBIGUOUS',
      message: 'This code matches more than one published passport',
    });
    // Each uid still answers on its own.
    expect((await get(a.id)).status).toBe(200);
  });

  it('is 410 PASSPORT_GONE for a voided item (serial_voided) and a voided model passport (passport_voided)', async () => {
    const item = await livePassport(t, key(), ++n, { overrides: { granularity: 'item' } });
    const model = await livePassport(t, key(), ++n);
    for (const id of [item.id, model.id]) {
      expect(
        (
          await t.call('POST', `/api/v2/products/${id}/void`, {
            key: key(),
            body: { reason: 'Destroyed in a fire' },
          })
        ).status,
      ).toBe(200);
    }
    const gi = await get(item.id);
    expect(gi.status).toBe(410);
    expect(gi.body.error.code).toBe('PASSPORT_GONE');
    expect(gi.headers.get('x-dpp-gone-reason')).toBe('serial_voided');
    expect(gi.headers.get('access-control-expose-headers')).toContain('X-DPP-Gone-Reason');
    expect(gi.text).not.toContain('sections');
    const gm = await get(model.id);
    expect(gm.status).toBe(410);
    expect(gm.headers.get('x-dpp-gone-reason')).toBe('passport_voided');
  });

  it('GET /p/{uid} answers the same JSON to Accept: application/json, and HTML otherwise', async () => {
    // A name beyond ASCII: the read's body is encoded in parts (view.ts).
    const name = 'Größe 15″ 🔋 écran';
    const p = await livePassport(t, key(), ++n, { overrides: { name } });
    const json = await t.call('GET', `/p/${p.id}`, { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    // Byte for byte: the read's body, serialised in parts (view.ts), is what res.json makes of the object.
    expect(json.text).toBe((await get(p.id)).text);
    expect(json.text).toContain(name);
    const page = await t.call('GET', `/p/${p.id}`, { headers: { Accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('vary')).toBe('Accept');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain(`<h1 id="title">${p.body.name as string}</h1>`);
    const missing = await t.call('GET', `/p/${randomUUID()}`, { headers: { Accept: 'application/json' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('PASSPORT_NOT_FOUND');
    const missingPage = await t.call('GET', `/p/${randomUUID()}`);
    expect(missingPage.status).toBe(404);
    expect(missingPage.text).toContain('Passport not found');
  });

  it('escapes every value on the page', async () => {
    const p = await livePassport(t, key(), ++n, {
      overrides: { name: '<script>alert(1)</script>' },
      publish: { updates: { notes: { text: '<img src=x onerror=alert(2)>' } } },
    });
    const page = await t.call('GET', `/p/${p.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('needs no registration: publish without publish-dpp is served (the resolver is what registration opens)', async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    const r = await get(p.id);
    expect(r.status).toBe(200);
    expect(r.body.registered).toBe(false);
    expect((await register(t, key(), p.id)).status).toBe(201);
    expect((await get(p.id)).body.registered).toBe(true);
  });

  it('answers HEAD and CORS preflights on the public routes, and 404 for an id that cannot be decoded', async () => {
    const p = await livePassport(t, key(), ++n);
    for (const path of [`/api/v2/public/passport/${p.id}`, `/p/${p.id}`]) {
      const head = await t.call('HEAD', path);
      expect(head.status, path).toBe(200);
      expect(head.text).toBe('');
      const preflight = await t.call('OPTIONS', path, {
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    }
    const bad = await t.call('GET', '/api/v2/public/passport/%E0%A4');
    expect(bad.status).toBe(404);
    expect(bad.body.error.code).toBe('PASSPORT_NOT_FOUND');
    expect((await t.call('GET', '/p/%E0%A4')).status).toBe(404);
  });
});
