import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { productBody } from '@dpp/testkit/products';
import { markProductInPrintLoop, markProductPublished, readProductForUpdate } from './hooks.js';

describe.each(testDialects())('DELETE /api/v2/products/{id} and the product hooks (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 9000;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  async function newProduct(): Promise<{ id: string; gtin: string; body: Record<string, unknown> }> {
    const body = productBody(++n);
    const r = await t.call('POST', '/api/v2/products', { key: t.tenants.a.admin, body });
    return { id: r.body.id as string, gtin: r.body.gtin as string, body };
  }
  const del = (id: string, key = t.tenants.a.admin) => t.call('DELETE', `/api/v2/products/${id}`, { key });

  it('hard-deletes a never-published product: 204, then 404; emits product.deleted; frees the GTIN', async () => {
    const p = await newProduct();
    await t.call('PATCH', `/api/v2/products/${p.id}`, { key: t.tenants.a.admin, body: { name: 'v2' } });
    const r = await del(p.id);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await t.call('GET', `/api/v2/products/${p.id}`, { key: t.tenants.a.admin })).status).toBe(404);
    expect((await del(p.id)).status).toBe(404);
    const versions = await t.cp.store.db
      .selectFrom('product_versions')
      .select('id')
      .where('product_id', '=', p.id)
      .execute();
    expect(versions).toEqual([]);
    const events = await t.cp.store.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('resource_id', '=', p.id)
      .orderBy('occurred_at')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['product.created', 'product.updated', 'product.deleted']);
    expect(JSON.parse(events[2]!.data)).toMatchObject({ productId: p.id, gtin: p.gtin });
    expect((await t.call('POST', '/api/v2/products', { key: t.tenants.a.admin, body: p.body })).status).toBe(
      201,
    );
  });

  it('answers 409 PUBLISHED_PASSPORT_RETAINED for an ever-published product', async () => {
    const p = await newProduct();
    expect(await markProductPublished(t.cp.store.db, t.tenants.a.id, p.id)).toBe(true);
    expect(await markProductPublished(t.cp.store.db, t.tenants.a.id, p.id)).toBe(false);
    const r = await del(p.id);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('PUBLISHED_PASSPORT_RETAINED');
    expect(
      (await t.call('GET', `/api/v2/products/${p.id}`, { key: t.tenants.a.admin })).body.data.everPublished,
    ).toBe(true);
  });

  it('answers 409 PRODUCT_REFERENCED for a product whose serials entered the print loop; voiding still works', async () => {
    const p = await newProduct();
    await t.cp.store.db.transaction().execute((trx) => markProductInPrintLoop(trx, t.tenants.a.id, p.id));
    const r = await del(p.id);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('PRODUCT_REFERENCED');
    const v = await t.call('POST', `/api/v2/products/${p.id}/void`, {
      key: t.tenants.a.admin,
      body: { reason: 'replace' },
    });
    expect(v.status).toBe(200);
    expect(v.body.data.inPrintLoop).toBe(true);
  });

  it('needs products:delete, and checks the scope before existence', async () => {
    const p = await newProduct();
    const r = await del(p.id, t.tenants.a.readOnly);
    expect(r.status).toBe(403);
    expect(r.body.error.details.required).toBe('products:delete');
    expect((await del(crypto.randomUUID(), t.tenants.a.readOnly)).status).toBe(403);
    expect((await t.call('GET', `/api/v2/products/${p.id}`, { key: t.tenants.a.admin })).status).toBe(200);
  });

  it('gives other domains the stage and flags under a row lock, and refuses marks of unknown products', async () => {
    const p = await newProduct();
    const view = await t.cp.store.db
      .transaction()
      .execute((trx) => readProductForUpdate(trx, t.tenants.a.id, p.id));
    expect(view).toMatchObject({
      id: p.id,
      lifecycleStage: 'draft',
      everPublished: false,
      inPrintLoop: false,
    });
    expect(await readProductForUpdate(t.cp.store.db, t.tenants.b.id, p.id)).toBeUndefined();
    await expect(markProductPublished(t.cp.store.db, t.tenants.b.id, p.id)).rejects.toThrow(/does not exist/);
  });
});
