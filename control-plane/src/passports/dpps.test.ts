/**
 * The routes api-v2.md names only by their errors: DELETE /api/v2/dpp/{productId}, DELETE and PATCH of
 * /api/v1/dpps/{dppId} and /api/v2/dpps/{dppId}, and the market status. Production refuses them as the spec says; development and
 * test change and archive passports never published, and retain published ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { randomUUID } from 'node:crypto';
import { command, envelope, generated, livePassport, readyProduct } from '@dpp/testkit/passports';
import { updateProduct } from '../products/index.js';
import { schemaRegistry } from '../schemas/index.js';
import { applyCommand } from './commands.js';

describe.each(testDialects())('the /dpp and /dpps routes in development and test (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 700;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  async function draftPassport(): Promise<string> {
    const p = await readyProduct(t, key(), ++n);
    await generated(t, key(), p.id);
    return p.id;
  }
  const state = async (id: string) =>
    (await t.call('GET', `/api/v2/passports/${id}`, { key: key() })).body.state;

  it('archives a passport never published, on every path, once; a repeat answers it archived', async () => {
    for (const path of ['/api/v2/dpp', '/api/v2/dpps', '/api/v1/dpps']) {
      const id = await draftPassport();
      const first = await t.call('DELETE', `${path}/${id}`, { key: key() });
      expect(first.status, `${path}: ${first.text}`).toBe(200);
      expect(first.body.data).toMatchObject({ dppId: id, state: 'archived', changed: true });
      expect(await state(id)).toBe('archived');
      const again = await t.call('DELETE', `${path}/${id}`, { key: key() });
      expect(again.body.data).toEqual({ ...first.body.data, changed: false });
      // The lifecycle log has the one ARCHIVE, as the command would have written it.
      const log = await t.cp.store.db
        .selectFrom('passport_commands')
        .select('type')
        .where('product_id', '=', id)
        .execute();
      expect(log.map((c) => c.type)).toEqual(['PASSPORT.ARCHIVE']);
    }
  });

  it('decides "never published" inside the archive itself, so a publish in between cannot slip through', async () => {
    // What DELETE runs after its first read: the archive command, told to refuse a published passport. Here the
    // passport was published after that read (a live one), and the command refuses it in its own transaction.
    const p = await livePassport(t, key(), ++n, { register: false });
    const run = applyCommand(
      t.cp.store.db,
      {
        tenantId: t.tenants.a.id,
        actor: { type: 'api_key', id: null },
        correlationId: randomUUID(),
        now: Date.now,
        principalType: 'api_key',
        principalId: 'test',
      },
      {
        ...envelope(t.tenants.a.id, 'PASSPORT.ARCHIVE', { passportId: p.id, reason: 'race' }),
        type: 'PASSPORT.ARCHIVE',
      },
      { unpublishedOnly: true },
    );
    await expect(run).rejects.toMatchObject({ code: 'PUBLISHED_PASSPORT_RETAINED' });
    expect(await state(p.id)).not.toBe('archived');
  });

  it('decides "never published" under the product lock when PATCH changes it, so a publish in between cannot slip through', async () => {
    // What PATCH /dpps runs after its first read: the product update, told to refuse a published passport. Here the
    // passport was published after that read (a live one), and the update refuses it in its own transaction.
    const p = await livePassport(t, key(), ++n, { register: false });
    const before = (await t.call('GET', `/api/v2/products/${p.id}`, { key: key() })).body;
    const run = updateProduct(
      t.cp.store.db,
      {
        tenantId: t.tenants.a.id,
        actor: { type: 'api_key', id: null },
        correlationId: randomUUID(),
        env: 'test',
        registry: schemaRegistry,
        now: Date.now,
      },
      p.id,
      { name: 'Renamed in a race' },
      { unpublishedOnly: true },
    );
    await expect(run).rejects.toMatchObject({ code: 'PUBLISHED_PASSPORT_RETAINED' });
    expect((await t.call('GET', `/api/v2/products/${p.id}`, { key: key() })).body).toEqual(before);
  });

  it('retains a published passport: 409 PUBLISHED_PASSPORT_RETAINED, and nothing changes', async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    const before = await state(p.id);
    for (const [method, path, body] of [
      ['DELETE', `/api/v2/dpp/${p.id}`, undefined],
      ['DELETE', `/api/v2/dpps/${p.id}`, undefined],
      ['PATCH', `/api/v2/dpps/${p.id}`, { name: 'Renamed' }],
      ['PATCH', `/api/v1/dpps/${p.id}`, { customData: { a: 1 } }],
    ] as const) {
      const r = await t.call(method, path, { key: key(), body });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(409);
      expect(r.body.error.code).toBe('PUBLISHED_PASSPORT_RETAINED');
      expect(r.body.error.details.firstPublishedAt).toEqual(expect.any(String));
    }
    expect(await state(p.id)).toBe(before);
    const product = await t.call('GET', `/api/v2/products/${p.id}`, { key: key() });
    expect(JSON.stringify(product.body)).not.toContain('Renamed');
  });

  it('changes the product data of a passport never published, through v1 and v2', async () => {
    const id = await draftPassport();
    const v2 = await t.call('PATCH', `/api/v2/dpps/${id}`, { key: key(), body: { name: 'Renamed twice' } });
    expect(v2.status, v2.text).toBe(200);
    expect(v2.body.data.productName).toBe('Renamed twice');
    const v1 = await t.call('PATCH', `/api/v1/dpps/${id}`, {
      key: key(),
      body: { customData: { line: 'B' } },
    });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body.data.customData).toMatchObject({ line: 'B' });
  });

  it("records an item's market status with its trail; the public passport shows it and stays served", async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    const path = `/api/v2/backup/passport/${p.id}/market-status`;
    const post = (body: Record<string, unknown>) => t.call('POST', path, { key: key(), body });
    // Withdrawn or recalled only once placed; a reason is required for them.
    expect((await post({ status: 'withdrawn', reason: 'x' })).body.error.code).toBe('INVALID_TRANSITION');
    const noReason = await post({ status: 'recalled' });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.details.field).toBe('reason');
    expect((await post({ status: 'sold_out' })).status).toBe(400);
    const placed = await post({ status: 'placed_on_market', effectiveAt: '2026-11-01T00:00:00Z' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.data).toMatchObject({
      status: 'placed_on_market',
      effectiveAt: '2026-11-01T00:00:00.000Z',
      recordedBy: { type: 'api_key' },
    });
    expect((await post({ status: 'placed_on_market' })).status).toBe(200); // already: nothing recorded
    const recalled = await post({ status: 'recalled', reason: 'Battery overheating (RAPEX A12/0001/26)' });
    expect(recalled.status).toBe(201);
    const history = await t.call('GET', path, { key: key() });
    expect(history.body.data.map((e: { status: string }) => e.status)).toEqual([
      'recalled',
      'placed_on_market',
    ]);
    // The public passport is still served (never 410) and says so, in JSON and on the page.
    const pub = await t.call('GET', `/api/v2/public/passport/${p.id}`);
    expect(pub.status).toBe(200);
    expect(pub.body.marketStatus).toEqual({
      status: 'recalled',
      since: recalled.body.data.effectiveAt,
      reason: 'Battery overheating (RAPEX A12/0001/26)',
    });
    const page = await t.call('GET', `/p/${p.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('This product was recalled on');
    // Every change is in the audit log.
    const audit = await t.cp.store.db
      .selectFrom('audit_log')
      .select('action')
      .where('resource_id', '=', p.id)
      .where('action', 'like', 'passport.market_status.%')
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual([
      'passport.market_status.placed_on_market',
      'passport.market_status.recalled',
    ]);
  });

  it('places an item on the market only with a published passport', async () => {
    const id = await draftPassport();
    const r = await t.call('POST', `/api/v2/backup/passport/${id}/market-status`, {
      key: key(),
      body: { status: 'placed_on_market' },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('INVALID_STATE_TRANSITION');
    expect(
      (await t.call('GET', `/api/v2/backup/passport/${id}/market-status`, { key: key() })).body.data,
    ).toEqual([]);
  });

  it('answers 404 for an unknown or another tenant passport, 400 for an empty patch, and the documented 403', async () => {
    const other = await readyProduct(t, t.tenants.b.admin, ++n);
    await generated(t, t.tenants.b.admin, other.id);
    const id = await draftPassport();
    expect((await t.call('DELETE', `/api/v2/dpps/${other.id}`, { key: key() })).status).toBe(404);
    expect((await t.call('DELETE', `/api/v2/dpps/not-a-uuid`, { key: key() })).status).toBe(400);
    expect((await t.call('PATCH', `/api/v2/dpps/${id}`, { key: key(), body: {} })).status).toBe(400);
    const noGeneration = await readyProduct(t, key(), ++n);
    expect((await t.call('DELETE', `/api/v2/dpp/${noGeneration.id}`, { key: key() })).status).toBe(404);
    // ARCHIVE has no transition from submitted: as the command would answer.
    expect((await command(t, id, 'SUBMIT')).status).toBe(200);
    const submitted = await t.call('DELETE', `/api/v2/dpps/${id}`, { key: key() });
    expect(submitted.status).toBe(409);
    expect(submitted.body.error.code).toBe('INVALID_TRANSITION');
  });
});

describe.each(testDialects())('the /dpp and /dpps routes in production (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, config: { env: 'production' } });
  });
  afterAll(() => t?.close());

  it('refuses as the spec says: 503 in the envelope for /dpp, 501 with no body and the code in a header for /dpps', async () => {
    const key = t.tenants.a.admin;
    const p = await readyProduct(t, key, 1);
    await generated(t, key, p.id);
    const dpp = await t.call('DELETE', `/api/v2/dpp/${p.id}`, { key });
    expect(dpp.status).toBe(503);
    expect(dpp.body.error.code).toBe('EIDAS_ACTOR_BINDING_UNAVAILABLE');
    for (const [method, path, body] of [
      ['DELETE', `/api/v2/dpps/${p.id}`, undefined],
      ['DELETE', `/api/v1/dpps/${p.id}`, undefined],
      ['PATCH', `/api/v2/dpps/${p.id}`, { category: 'textiles' }],
      ['PATCH', `/api/v1/dpps/${p.id}`, { customData: { a: 1 } }],
    ] as const) {
      const r = await t.call(method, path, { key, body });
      expect(r.status, `${method} ${path}`).toBe(501);
      expect(r.text).toBe('');
      expect(r.headers.get('x-service-error-code')).toBe('EIDAS_ACTOR_BINDING_UNAVAILABLE');
    }
    const market = await t.call('POST', `/api/v2/backup/passport/${p.id}/market-status`, {
      key,
      body: { status: 'placed_on_market' },
    });
    expect(market.status).toBe(503);
    expect(market.body.error.code).toBe('EIDAS_ACTOR_BINDING_UNAVAILABLE');
    // Other fields of a passport never published proceed; nothing above changed its state.
    const renamed = await t.call('PATCH', `/api/v2/dpps/${p.id}`, { key, body: { name: 'Prod rename' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await t.call('GET', `/api/v2/passports/${p.id}`, { key })).body.state).toBe('draft');
  });
});
