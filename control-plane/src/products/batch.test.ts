import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { ELECTRONICS_EXTENSIONS, gtinFor, productBody } from '@dpp/testkit/products';

describe.each(testDialects())('POST /api/v2/products/batch (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  const batch = (items: unknown, key = t.tenants.a.admin, headers?: Record<string, string>) =>
    t.call('POST', '/api/v2/products/batch', { key, body: { items }, ...(headers ? { headers } : {}) });

  it('commits the good items and reports each bad one by index with a CODE:-prefixed error', async () => {
    const existing = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      body: productBody(1),
    });
    expect(existing.status).toBe(201);
    const items = [
      productBody(10),
      productBody(11, { gtin: '4006381333932' }), // bad check digit
      productBody(12),
      productBody(13, { gtin: gtinFor(10) }), // same GTIN as items[0]
      productBody(14, { gtin: gtinFor(1) }), // same GTIN as a stored product
      productBody(15, { extensions: undefined }),
      productBody(16, { category: 'toys' }),
      productBody(17, { extensions: { ...ELECTRONICS_EXTENSIONS, repairabilityScore: 99 } }),
      42,
      productBody(18, { granularity: 'item', gtin: gtinFor(10), serialNumber: 'A1' }),
    ];
    const r = await batch(items, t.tenants.a.admin, { 'X-Correlation-Id': 'batch-1' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: 3, failed: 7 });
    expect(r.body.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([
      [1, 'VALIDATION_ERROR'],
      [3, 'DUPLICATE_GTIN'],
      [4, 'DUPLICATE_GTIN'],
      [5, 'EXTENSIONS_REQUIRED'],
      [6, 'SCHEMA_NOT_FOUND'],
      [7, 'VALIDATION_ERROR'],
      [8, 'VALIDATION_ERROR'],
    ]);
    for (const e of r.body.errors) expect(e.error.startsWith(`${e.code}: `)).toBe(true);
    expect(r.body.errors[0]).toMatchObject({
      field: 'gtin',
      error: expect.stringMatching(/^VALIDATION_ERROR: gtin: /),
    });
    expect(r.body.errors[1].error).toContain('items[0]');
    expect(r.body.errors[5].field).toBe('extensions.repairabilityScore');
    expect(r.body.products.map((p: { index: number }) => p.index)).toEqual([0, 2, 9]);

    const listed = await t.call('GET', '/api/v2/products?limit=100', { key: t.tenants.a.admin });
    expect(listed.body.data).toHaveLength(4);
    for (const p of r.body.products) {
      const events = await t.call('GET', `/api/v2/products/${p.id}/events`, { key: t.tenants.a.admin });
      expect(events.body.data).toMatchObject([{ type: 'product.created', correlationId: 'batch-1' }]);
    }
  });

  it('answers 200 with every item failed when all are bad', async () => {
    const r = await batch([{}, { name: 'x' }]);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: 0, failed: 2, products: [] });
  });

  it('takes 1 to 1000 items: 0 and 1001 are 400 naming items, 1000 (over 1 MB) all commit', async () => {
    const none = await batch([]);
    expect(none.status).toBe(400);
    expect(none.body.error.details.field).toBe('items');
    const tooMany = await batch(Array.from({ length: 1001 }, (_, i) => productBody(20_000 + i)));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.field).toBe('items');
    expect(tooMany.body.error.message).toContain('1000');
    const items = Array.from({ length: 1000 }, (_, i) =>
      productBody(30_000 + i, { customData: { note: 'x'.repeat(900) } }),
    );
    expect(JSON.stringify({ items }).length).toBeGreaterThan(1024 * 1024);
    const r = await batch(items);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: 1000, failed: 0, errors: [] });
    const count = await t.cp.store.db
      .selectFrom('products')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', t.tenants.a.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1004);
  });

  it('refuses a body without items or with other members, and a read-only key', async () => {
    expect(
      (await t.call('POST', '/api/v2/products/batch', { key: t.tenants.a.admin, body: [productBody(1)] }))
        .status,
    ).toBe(400);
    const extra = await t.call('POST', '/api/v2/products/batch', {
      key: t.tenants.a.admin,
      body: { items: [productBody(40_000)], callbackUrl: 'https://x.test' },
    });
    expect(extra.status).toBe(400);
    const denied = await batch([productBody(40_001)], t.tenants.a.readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.required).toBe('products:create');
  });

  it('replays a batch repeated with the same Idempotency-Key without creating twice', async () => {
    const headers = { 'Idempotency-Key': crypto.randomUUID() };
    const items = [productBody(50_000), productBody(50_001)];
    const a = await batch(items, t.tenants.b.admin, headers);
    const b = await batch(items, t.tenants.b.admin, headers);
    expect(a.body.created).toBe(2);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const listed = await t.call('GET', '/api/v2/products', { key: t.tenants.b.admin });
    expect(listed.body.data).toHaveLength(2);
  });
});
