import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../tenants/index.js';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { gtinFor, productBody } from '@dpp/testkit/products';

interface Item {
  id: string;
  productName: string;
  createdAt: string;
  status: string;
}

describe.each(testDialects())('reading and listing products (%s)', (dialect) => {
  let t: TestControlPlane;
  let ids: string[];
  const names = ['delta', 'Alpha', 'charlie', 'Bravo', 'echo', 'alpha two'];
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    ids = [];
    for (let i = 0; i < 30; i++) {
      const category = i % 3 === 0 ? 'furniture' : 'electronics';
      const body =
        category === 'furniture'
          ? productBody(i, {
              name: `${names[i % names.length]} ${i}`,
              category,
              extensions: { primaryMaterial: 'metal', weightKg: 3, forestCertification: 'none' },
            })
          : productBody(i, { name: `${names[i % names.length]} ${i}` });
      const r = await t.call('POST', '/api/v2/products', { key: t.tenants.a.admin, body });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    // Two validated, one of them then voided.
    for (const id of ids.slice(0, 2)) {
      await t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, {
        key: t.tenants.a.admin,
        body: { stage: 'validated' },
      });
    }
    await t.call('POST', `/api/v2/products/${ids[1]}/void`, {
      key: t.tenants.a.admin,
      body: { reason: 'test' },
    });
  });
  afterAll(() => t.close());

  const list = (query: string, key = t.tenants.a.readOnly) =>
    t.call('GET', `/api/v2/products${query}`, { key });

  async function all(query: string): Promise<Item[]> {
    const out: Item[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 50; page++) {
      const sep = query ? '&' : '?';
      const r = await list(`${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      out.push(...(r.body.data as Item[]));
      expect(r.body.hasMore).toBe(r.body.nextCursor !== null);
      if (!r.body.hasMore) return out;
      cursor = r.body.nextCursor;
    }
    throw new Error('too many pages');
  }

  it('uses a data envelope with hasMore and nextCursor, 25 items by default, newest first', async () => {
    const r = await list('');
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(25);
    expect(r.body.hasMore).toBe(true);
    expect(typeof r.body.nextCursor).toBe('string');
    const created = (r.body.data as Item[]).map((p) => p.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('pages through every product once with an opaque cursor', async () => {
    const seen = await all('?limit=7');
    expect(seen).toHaveLength(30);
    expect(new Set(seen.map((p) => p.id))).toEqual(new Set(ids));
    const asc = await all('?limit=4&sort=createdAt');
    expect(asc.map((p) => p.id)).toEqual(seen.map((p) => p.id).reverse());
  });

  it('sorts by productName case-insensitively, both directions, across pages', async () => {
    const asc = (await all('?limit=6&sort=productName')).map((p) => p.productName.toLowerCase());
    expect(asc).toEqual([...asc].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const desc = (await all('?limit=6&sort=-productName')).map((p) => p.productName.toLowerCase());
    expect(desc).toEqual([...asc].reverse());
  });

  it('filters by category, status (status or stage names, comma-separated) and gtin', async () => {
    const furniture = await all('?category=Furniture');
    expect(furniture).toHaveLength(10);
    expect(furniture.every((p) => (p as unknown as { category: string }).category === 'furniture')).toBe(
      true,
    );
    expect((await all('?status=Validated')).map((p) => p.id)).toEqual([ids[0]]);
    expect((await all('?status=voided')).map((p) => p.id)).toEqual([ids[1]]);
    expect(await all('?status=draft')).toHaveLength(28);
    expect(await all('?status=ReadyForDpp')).toHaveLength(0);
    expect(new Set((await all('?status=Validated,Voided')).map((p) => p.id))).toEqual(
      new Set([ids[0], ids[1]]),
    );
    expect(await all('?status=ready_for_dpp&category=furniture')).toHaveLength(0);
    const byGtin = await all(`?gtin=${gtinFor(4).replace(/^0+/, '')}`);
    expect(byGtin.map((p) => p.id)).toEqual([ids[4]]);
  });

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=ten', 'limit'],
    ['?sort=name', 'sort'],
    ['?status=Archived2', 'status'],
    ['?gtin=123', 'gtin'],
    ['?category=a%20b', 'category'],
    ['?cursor=bm9wZQ', 'cursor'],
  ])('answers 400 VALIDATION_ERROR naming the parameter for %s', async (query, field) => {
    const r = await list(query);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details.field).toBe(field);
  });

  it('refuses an unknown parameter and a cursor made for another sort', async () => {
    const unknown = await list('?categroy=electronics');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('categroy');
    const first = await list('?limit=2&sort=productName');
    const mixed = await list(`?sort=createdAt&cursor=${first.body.nextCursor}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.details.field).toBe('cursor');
  });

  it('reads one product in a data envelope; another workspace gets a plain 404', async () => {
    const own = await t.call('GET', `/api/v2/products/${ids[3]}`, { key: t.tenants.a.readOnly });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ id: ids[3], status: 'Draft' });
    for (const [method, path, body] of [
      ['GET', `/api/v2/products/${ids[3]}`, undefined],
      ['PATCH', `/api/v2/products/${ids[3]}`, { name: 'stolen' }],
      ['PUT', `/api/v2/products/${ids[3]}`, { name: 'stolen' }],
      ['DELETE', `/api/v2/products/${ids[3]}`, undefined],
      ['GET', `/api/v2/products/${ids[3]}/versions`, undefined],
      ['GET', `/api/v2/products/${ids[3]}/events`, undefined],
      ['POST', `/api/v2/products/${ids[3]}/lifecycle/transition`, { stage: 'validated' }],
      ['POST', `/api/v2/products/${ids[3]}/void`, { reason: 'not mine' }],
    ] as const) {
      const r = await t.call(method, path, { key: t.tenants.b.admin, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code, `${method} ${path}`).toBeUndefined();
    }
    expect(
      (await t.call('GET', `/api/v2/products/${ids[3]}`, { key: t.tenants.a.admin })).body.data.version,
    ).toBe(1);
    expect((await t.call('GET', `/api/v2/products/${randomUUID()}`, { key: t.tenants.a.admin })).status).toBe(
      404,
    );
    expect((await t.call('GET', '/api/v2/products/not-a-uuid', { key: t.tenants.a.admin })).status).toBe(400);
    // Scopes are checked before existence: no scope is 403 even for an unknown id.
    expect(
      (await t.call('GET', `/api/v2/products/${randomUUID()}`, { key: t.tenants.a.noScopes })).status,
    ).toBe(403);
  });

  it('another workspace lists only its own products', async () => {
    const r = await list('', t.tenants.b.admin);
    expect(r.body.data).toEqual([]);
    expect(r.body.hasMore).toBe(false);
  });

  it('lists with a key holding only the legacy products:view scope', async () => {
    const key = await createApiKey(
      t.cp.store.db,
      { tenantId: t.tenants.a.id, name: 'legacy view', scopes: ['products:view'] },
      { actor: { type: 'system', id: null } },
    );
    const r = await list('?limit=1', key.secret);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    const denied = await t.call('POST', '/api/v2/products', { key: key.secret, body: productBody(999) });
    expect(denied.status).toBe(403);
  });

  it("answers the workspace's categories with usage counts", async () => {
    const r = await t.call('GET', '/api/v2/products/categories', { key: t.tenants.a.readOnly });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject([
      { category: 'electronics', productCount: 20, currentSchemaVersion: '2.0.0', title: 'Electronics' },
      { category: 'furniture', productCount: 10, statusCounts: { Draft: 9, Validated: 1 } },
    ]);
    // ids[1] (electronics) was validated, then voided: it counts as Voided only.
    expect(r.body.data[0].statusCounts).toEqual({ Draft: 19, Voided: 1 });
    const b = await t.call('GET', '/api/v2/products/categories', { key: t.tenants.b.readOnly });
    expect(b.body.data).toEqual([]);
  });
});
