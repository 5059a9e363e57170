import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { ELECTRONICS_EXTENSIONS, gtinFor, productBody } from '@dpp/testkit/products';
import { markProductPublished } from './hooks.js';

describe.each(testDialects())('PATCH and PUT /api/v2/products/{id} (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 5000;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  async function newProduct(overrides: Record<string, unknown> = {}): Promise<string> {
    const r = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      body: productBody(++n, overrides),
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  }
  const patch = (id: string, body: unknown, method: 'PATCH' | 'PUT' = 'PATCH') =>
    t.call(method, `/api/v2/products/${id}`, {
      key: t.tenants.a.admin,
      body,
      headers: { 'X-Correlation-Id': 'upd-1' },
    });

  it('changes fields, bumps the version, writes a version and emits product.updated', async () => {
    const id = await newProduct();
    const r = await patch(id, { name: 'Renamed', description: 'A brand new description' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      productName: 'Renamed',
      productDescription: 'A brand new description',
      version: 2,
    });
    const versions = await t.call('GET', `/api/v2/products/${id}/versions`, { key: t.tenants.a.readOnly });
    expect(versions.body.data.map((v: { version: number; change: string }) => [v.version, v.change])).toEqual(
      [
        [1, 'created'],
        [2, 'updated'],
      ],
    );
    expect(versions.body.data[1]).toMatchObject({
      changedFields: ['productName', 'productDescription'],
      correlationId: 'upd-1',
      actor: { type: 'api_key' },
      snapshot: { productName: 'Renamed', version: 2 },
    });
    expect(versions.body.data[0].snapshot.productName).toBe(`Product ${n}`);
    const events = await t.call('GET', `/api/v2/products/${id}/events`, { key: t.tenants.a.readOnly });
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual([
      'product.created',
      'product.updated',
    ]);
    expect(events.body.data[1].data).toMatchObject({
      productId: id,
      version: 2,
      changes: ['productName', 'productDescription'],
    });
  });

  it('treats PUT as an alias of PATCH with identical semantics', async () => {
    const id = await newProduct();
    const r = await patch(id, { name: 'Via PUT' }, 'PUT');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      productName: 'Via PUT',
      productDescription: `A product numbered ${n} for tests`,
      version: 2,
    });
  });

  it('merges extensions (null removes a field) and validates the result against the schema', async () => {
    const id = await newProduct({ extensions: { ...ELECTRONICS_EXTENSIONS, productLifetimeYears: 5 } });
    const r = await patch(id, { extensions: { repairabilityScore: 9, productLifetimeYears: null } });
    expect(r.status).toBe(200);
    expect(r.body.data.extensions).toEqual({ ...ELECTRONICS_EXTENSIONS, repairabilityScore: 9 });
    const bound = await patch(id, { extensions: { repairabilityScore: 10.5 } });
    expect(bound.status).toBe(400);
    expect(bound.body.error.details).toMatchObject({
      field: 'extensions.repairabilityScore',
      keyword: 'maximum',
      limit: 10,
    });
    const required = await patch(id, { extensions: { weeeCategory: null } });
    expect(required.status).toBe(400);
    expect(required.body.error.details).toMatchObject({
      field: 'extensions.weeeCategory',
      keyword: 'required',
    });
    expect((await patch(id, { extensions: null })).body.error.code).toBe('EXTENSIONS_REQUIRED');
    const read = await t.call('GET', `/api/v2/products/${id}`, { key: t.tenants.a.admin });
    expect(read.body.data.version).toBe(2);
  });

  it('changes category only with that category’s extensions in full', async () => {
    const id = await newProduct();
    const bare = await patch(id, { category: 'furniture' });
    expect(bare.status).toBe(422);
    expect(bare.body.error.code).toBe('EXTENSIONS_REQUIRED');
    const toys = await patch(id, { category: 'toys', extensions: {} });
    expect(toys.status).toBe(422);
    expect(toys.body.error.code).toBe('SCHEMA_NOT_FOUND');
    const ok = await patch(id, {
      category: 'furniture',
      extensions: { primaryMaterial: 'glass', weightKg: 4, forestCertification: 'none' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({
      category: 'furniture',
      schemaId: 'urn:dpp:schema:eu:furniture:2.0.0',
    });
    expect(ok.body.data.extensions).toEqual({
      primaryMaterial: 'glass',
      weightKg: 4,
      forestCertification: 'none',
    });
  });

  it('normalises a new GTIN and refuses one another model-granularity product holds (409 DUPLICATE_GTIN)', async () => {
    const taken = await newProduct();
    const id = await newProduct();
    const takenGtin = (await t.call('GET', `/api/v2/products/${taken}`, { key: t.tenants.a.admin })).body.data
      .gtin;
    const dup = await patch(id, { gtin: takenGtin });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'DUPLICATE_GTIN', details: { productId: taken } });
    const fresh = gtinFor(++n);
    const ok = await patch(id, { gtin: fresh.slice(1) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.gtin).toBe(fresh);
    expect((await patch(id, { gtin: '4006381333932' })).status).toBe(400);
    expect((await patch(id, { serialNumber: 'x'.repeat(21) })).status).toBe(400);
  });

  it('answers the product without a new version when nothing changes; refuses an empty body', async () => {
    const id = await newProduct();
    const current = (await t.call('GET', `/api/v2/products/${id}`, { key: t.tenants.a.admin })).body.data;
    const same = await patch(id, { name: current.productName, extensions: { repairabilityScore: 7.5 } });
    expect(same.status).toBe(200);
    expect(same.body.data.version).toBe(1);
    const empty = await patch(id, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.field).toBe('body');
  });

  it('refuses status, unknown fields and writes to a voided product', async () => {
    const id = await newProduct();
    for (const body of [{ status: 'Validated' }, { lifecycleStage: 'validated' }, { productName: 'x' }]) {
      const r = await patch(id, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    await t.call('POST', `/api/v2/products/${id}/void`, {
      key: t.tenants.a.admin,
      body: { reason: 'recalled' },
    });
    const r = await patch(id, { name: 'after void' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBeUndefined();
    expect(r.body.error.details.reason).toBe('product_voided');
  });

  it('needs products:edit', async () => {
    const id = await newProduct();
    const r = await t.call('PATCH', `/api/v2/products/${id}`, {
      key: t.tenants.a.readOnly,
      body: { name: 'x' },
    });
    expect(r.status).toBe(403);
    expect(r.body.error.details.required).toBe('products:edit');
  });

  it('outside production, writes category, gtin and customData of an ever-published product', async () => {
    const id = await newProduct();
    await markProductPublished(t.cp.store.db, t.tenants.a.id, id);
    const r = await patch(id, { gtin: gtinFor(++n), customData: { a: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ everPublished: true, customData: { a: 1 } });
  });
});

describe.each(testDialects())('product writes in production (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, config: { env: 'production' } });
  });
  afterAll(() => t.close());

  it('answers 503 EIDAS_ACTOR_BINDING_UNAVAILABLE to category, gtin or customData writes of an ever-published product', async () => {
    const created = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      body: productBody(1),
    });
    const id = created.body.id as string;
    // Never published: every field can change.
    expect(
      (
        await t.call('PATCH', `/api/v2/products/${id}`, {
          key: t.tenants.a.admin,
          body: { customData: { a: 1 } },
        })
      ).status,
    ).toBe(200);
    await markProductPublished(t.cp.store.db, t.tenants.a.id, id);
    for (const body of [
      { gtin: gtinFor(2) },
      { customData: { a: 2 } },
      {
        category: 'furniture',
        extensions: { primaryMaterial: 'glass', weightKg: 4, forestCertification: 'none' },
      },
    ]) {
      const r = await t.call('PATCH', `/api/v2/products/${id}`, { key: t.tenants.a.admin, body });
      expect(r.status, JSON.stringify(body)).toBe(503);
      expect(r.body.error.code).toBe('EIDAS_ACTOR_BINDING_UNAVAILABLE');
    }
    const name = await t.call('PUT', `/api/v2/products/${id}`, {
      key: t.tenants.a.admin,
      body: { name: 'Still editable' },
    });
    expect(name.status).toBe(200);
    expect(name.body.data).toMatchObject({
      productName: 'Still editable',
      gtin: created.body.gtin,
      customData: { a: 1 },
    });
  });
});
