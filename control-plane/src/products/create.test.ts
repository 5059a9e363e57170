import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { ELECTRONICS_EXTENSIONS, gtinFor, productBody } from '@dpp/testkit/products';

describe.each(testDialects())('POST /api/v2/products (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 1000;
  const next = () => ++n;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  const create = (body: unknown, key = t.tenants.a.admin, headers?: Record<string, string>) =>
    t.call('POST', '/api/v2/products', { key, body, ...(headers ? { headers } : {}) });
  const count = async () =>
    Number(
      (
        await t.cp.store.db
          .selectFrom('products')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('answers 201 with the product unwrapped: id, productName, productDescription, status Draft, 14-digit gtin', async () => {
    const body = productBody(next(), { name: 'Phone X', description: 'A repairable phone' });
    const r = await create(body);
    expect(r.status).toBe(201);
    expect(r.body.data).toBeUndefined();
    expect(r.body).toMatchObject({
      productName: 'Phone X',
      productDescription: 'A repairable phone',
      category: 'electronics',
      status: 'Draft',
      lifecycleStage: 'draft',
      gtin: body.gtin,
      granularity: 'model',
      companyPrefixLength: 7,
      epcScheme: 'auto',
      version: 1,
      extensions: ELECTRONICS_EXTENSIONS,
      schemaVersion: '2.0.0',
    });
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.name).toBeUndefined();
    expect(r.headers.get('location')).toBe(`/api/v2/products/${r.body.id}`);
    const read = await t.call('GET', `/api/v2/products/${r.body.id}`, { key: t.tenants.a.readOnly });
    expect(read.body.data.id).toBe(r.body.id);
  });

  it.each([
    ['GTIN-8', '95010939', '00000095010939'],
    ['GTIN-12', '036000291452', '00036000291452'],
    ['GTIN-13', '4006381333931', '04006381333931'],
  ])('normalises a valid %s to 14 digits', async (_kind, gtin, expected) => {
    const r = await create(productBody(next(), { gtin }));
    expect(r.status).toBe(201);
    expect(r.body.gtin).toBe(expected);
  });

  it('accepts status Draft and refuses any other status on create', async () => {
    expect((await create(productBody(next(), { status: 'Draft' }))).status).toBe(201);
    const r = await create(productBody(next(), { status: 'Validated' }));
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe('status');
  });

  it.each([
    ['a bad check digit', { gtin: '4006381333932' }, 'gtin', /check digit/],
    ['a GTIN of 11 digits', { gtin: '12345678901' }, 'gtin', /8, 12, 13 or 14/],
    ['a short description', { description: 'too short' }, 'description', /at least 10/],
    ['a missing name', { name: undefined }, 'name', /./],
    ['a NUL character in the name', { name: 'Phone\u0000X' }, 'name', /NUL/],
    ['a serial over 20 characters', { serialNumber: 'A'.repeat(21) }, 'serialNumber', /at most 20/],
    ['a numeric serial of 2^38', { serialNumber: '274877906944' }, 'serialNumber', /2\^38/],
    ['a serial with a space', { serialNumber: 'AB 12' }, 'serialNumber', /GS1/],
    ['a company prefix length of 5', { companyPrefixLength: 5 }, 'companyPrefixLength', /at least 6/],
    ['an unknown granularity', { granularity: 'pallet' }, 'granularity', /./],
    ['an unknown EPC scheme', { epcScheme: 'sgtin-64' }, 'epcScheme', /./],
    ['extensions that are not an object', { extensions: [1] }, 'extensions', /./],
  ])(
    'refuses %s with 400 VALIDATION_ERROR naming the field, and writes nothing',
    async (_name, patch, field, msg) => {
      const before = await count();
      const r = await create(productBody(next(), patch));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(r.body.error.details.field).toBe(field);
      expect(r.body.error.message).toMatch(msg);
      expect(await count()).toBe(before);
    },
  );

  it('accepts the largest SGTIN-96 serial 2^38 - 1 and an alphanumeric serial of 20 characters', async () => {
    expect((await create(productBody(next(), { serialNumber: '274877906943' }))).status).toBe(201);
    const r = await create(productBody(next(), { serialNumber: 'ABCDEFGHIJ-123456789' }));
    expect(r.status).toBe(201);
    expect(r.body.serialNumber).toBe('ABCDEFGHIJ-123456789');
  });

  it('answers 409 DUPLICATE_GTIN for a second model-granularity product with the same GTIN (any GTIN length)', async () => {
    const gtin = gtinFor(next());
    const a = await create(productBody(next(), { gtin }));
    expect(a.status).toBe(201);
    const before = await count();
    const b = await create(productBody(next(), { gtin: gtin.replace(/^0+/, '') }));
    expect(b.status).toBe(409);
    expect(b.body.error).toMatchObject({ code: 'DUPLICATE_GTIN', details: { gtin, productId: a.body.id } });
    expect(await count()).toBe(before);
    // Another workspace may use the GTIN.
    expect((await create(productBody(next(), { gtin }), t.tenants.b.admin)).status).toBe(201);
  });

  it('lets item-granularity products share a GTIN, unique per GTIN and serialNumber (409 DUPLICATE_SERIAL)', async () => {
    const gtin = gtinFor(next());
    expect((await create(productBody(next(), { gtin }))).status).toBe(201);
    const i1 = await create(productBody(next(), { gtin, granularity: 'item', serialNumber: 'S1' }));
    const i2 = await create(productBody(next(), { gtin, granularity: 'item', serialNumber: 'S2' }));
    expect([i1.status, i2.status]).toEqual([201, 201]);
    const dup = await create(productBody(next(), { gtin, granularity: 'batch', serialNumber: 'S1' }));
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'DUPLICATE_SERIAL', details: { productId: i1.body.id } });
  });

  it('answers 422 EXTENSIONS_REQUIRED when extensions are missing, null or empty', async () => {
    for (const extensions of [undefined, null, {}]) {
      const r = await create(productBody(next(), { extensions }));
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('EXTENSIONS_REQUIRED');
      expect(r.body.error.details.requiredFields).toContain('weeeCategory');
    }
  });

  it('answers 422 SCHEMA_NOT_FOUND for a category without an effective schema', async () => {
    const toys = await create(productBody(next(), { category: 'toys' }));
    expect(toys.status).toBe(422);
    expect(toys.body.error.code).toBe('SCHEMA_NOT_FOUND');
    expect(toys.body.error.details.availableCategories).toEqual([
      'battery',
      'electronics',
      'furniture',
      'textiles',
    ]);
    const us = await create(productBody(next(), { jurisdiction: 'US' }));
    expect(us.status).toBe(422);
    expect(us.body.error.code).toBe('SCHEMA_NOT_FOUND');
  });

  it.each([
    [{ repairabilityScore: 11 }, 'extensions.repairabilityScore', 'maximum', 10],
    [{ weeeCategory: '4' }, 'extensions.weeeCategory', 'enum', undefined],
    [{ recycledContentPercentage: 101 }, 'extensions.recycledContentPercentage', 'maximum', 100],
    [{ repairabilityScore: undefined }, 'extensions.repairabilityScore', 'required', undefined],
    [{ colour: 'red' }, 'extensions.colour', 'additionalProperties', false],
  ])('validates extensions against the effective schema: %j', async (patch, field, keyword, limit) => {
    const r = await create(productBody(next(), { extensions: { ...ELECTRONICS_EXTENSIONS, ...patch } }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, keyword } });
    expect(r.body.error.message).toContain(field);
    if (limit !== undefined) expect(r.body.error.details.limit).toEqual(limit);
    expect(r.body.error.details.schemaId).toBe('urn:dpp:schema:eu:electronics:2.0.0');
  });

  it('creates products of the other categories against their own schemas', async () => {
    const battery = await create(
      productBody(next(), {
        category: 'battery',
        extensions: {
          batteryCategory: 'ev',
          manufacturerIdentification: 'Cellco GmbH, Berlin',
          manufacturingDate: '2026-03-01',
          batteryMassKg: 420,
          chemistry: 'NMC',
          ratedCapacityAh: 150,
          nominalVoltageV: 400,
          carbonFootprintKgCo2ePerKwh: 65.2,
          criticalRawMaterials: ['cobalt', 'lithium'],
        },
      }),
    );
    expect(battery.status).toBe(201);
    const furniture = await create(
      productBody(next(), {
        category: 'Furniture',
        companyPrefixLength: 9,
        extensions: { primaryMaterial: 'solid_wood', weightKg: 12.5, forestCertification: 'FSC' },
      }),
    );
    expect(furniture.status).toBe(201);
    expect(furniture.body).toMatchObject({ category: 'furniture', companyPrefixLength: 9 });
  });

  it('keeps the EPC scheme of its serials: auto by default, sgtin-96 or sgtin-198, changed by PATCH', async () => {
    const r = await create(productBody(next(), { epcScheme: 'sgtin-198' }));
    expect(r.status, r.text).toBe(201);
    expect(r.body.epcScheme).toBe('sgtin-198');
    const patched = await t.call('PATCH', `/api/v2/products/${r.body.id}`, {
      key: t.tenants.a.admin,
      body: { epcScheme: 'sgtin-96' },
    });
    expect(patched.status, patched.text).toBe(200);
    const read = await t.call('GET', `/api/v2/products/${r.body.id}`, { key: t.tenants.a.readOnly });
    expect(read.body.data.epcScheme).toBe('sgtin-96');
    const bad = await t.call('PATCH', `/api/v2/products/${r.body.id}`, {
      key: t.tenants.a.admin,
      body: { epcScheme: 'SGTIN-198' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('epcScheme');
  });

  it('emits product.created and writes version 1', async () => {
    const r = await create(productBody(next()), t.tenants.a.admin, { 'X-Correlation-Id': 'create-evt-1' });
    const events = await t.call('GET', `/api/v2/products/${r.body.id}/events`, { key: t.tenants.a.readOnly });
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0]).toMatchObject({
      type: 'product.created',
      correlationId: 'create-evt-1',
      data: { productId: r.body.id, gtin: r.body.gtin, status: 'Draft' },
    });
    const outbox = await t.cp.store.db
      .selectFrom('outbox')
      .select('payload')
      .where('payload', 'like', `%${events.body.data[0].id}%`)
      .execute();
    expect(outbox).toHaveLength(1);
    const versions = await t.call('GET', `/api/v2/products/${r.body.id}/versions`, {
      key: t.tenants.a.readOnly,
    });
    expect(versions.body.data).toMatchObject([
      { version: 1, change: 'created', snapshot: { id: r.body.id } },
    ]);
  });

  it('replays a repeat with the same Idempotency-Key: one product, the same answer', async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = productBody(next());
    const first = await create(body, t.tenants.a.admin, headers);
    const again = await create(body, t.tenants.a.admin, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await create(productBody(next()), t.tenants.a.admin, headers);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBeUndefined();
  });

  it('answers 403 API_SCOPE_DENIED to a read-only key and 401 without a key, before looking at the body', async () => {
    const before = await count();
    const r = await create(productBody(next()), t.tenants.a.readOnly);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'products:create', available: ['products:read'] },
    });
    expect((await create({ bogus: true }, t.tenants.a.noScopes)).status).toBe(403);
    expect((await t.call('POST', '/api/v2/products', { body: productBody(next()) })).status).toBe(401);
    expect(await count()).toBe(before);
  });

  it('refuses unknown fields, invalid JSON and a non-JSON body with a 4xx', async () => {
    const unknown = await create(productBody(next(), { productName: 'x' }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('productName');
    const broken = await t.call('POST', '/api/v2/products', { key: t.tenants.a.admin, body: '{"name":' });
    expect(broken.status).toBe(400);
    const text = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      body: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('keeps customData', async () => {
    const r = await create(productBody(next(), { customData: { erp: { sku: 'X-1' } } }));
    expect(r.status).toBe(201);
    expect(r.body.customData).toEqual({ erp: { sku: 'X-1' } });
  });
});
