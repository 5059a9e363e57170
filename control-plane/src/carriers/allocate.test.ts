import { randomUUID } from 'node:crypto';
import { decodeSgtin96, isSgtin96SafeSerial } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { SERIAL_LIMIT } from './model.js';
import { allocate, createProduct, eventsOf, exportCsv } from '@dpp/testkit/carriers';

const BATCH = '/api/v2/carriers/batch';

describe.each(testDialects())('POST /carriers/batch (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    key = t.tenants.a.admin;
  });
  afterAll(() => t?.close());

  it('allocates numeric serials from 1, one sequence per workspace across products', async () => {
    const p1 = await createProduct(t, key);
    const p2 = await createProduct(t, key);
    const res = await t.call('POST', BATCH, { key, body: { productId: p1.id, count: 3 } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      batchId: expect.any(String),
      productId: p1.id,
      gtin: p1.gtin,
      allocated: 3,
      serials: ['1', '2', '3'],
      exportPath: `/api/v2/carriers/export?productId=${p1.id}&batchId=${res.body.batchId}`,
    });
    const second = await allocate(t, key, p2.id, 2);
    expect(second.serials).toEqual(['4', '5']);
    // Another workspace has its own sequence.
    const other = await createProduct(t, t.tenants.b.admin);
    expect((await allocate(t, t.tenants.b.admin, other.id, 2)).serials).toEqual(['1', '2']);
  });

  it('refuses count 0, 10001, fractions and a missing productId with 400 VALIDATION_ERROR', async () => {
    const p = await createProduct(t, key);
    for (const body of [
      { productId: p.id, count: 0 },
      { productId: p.id, count: 10_001 },
      { productId: p.id, count: 1.5 },
      { productId: p.id, count: '5' },
      { count: 5 },
    ]) {
      const res = await t.call('POST', BATCH, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.field).toBe('productId' in body ? 'count' : 'productId');
    }
  });

  it('allocates 10,000 distinct SGTIN-96-safe serials in one call', async () => {
    const p = await createProduct(t, key);
    const batch = await allocate(t, key, p.id, 10_000);
    expect(batch.serials).toHaveLength(10_000);
    expect(new Set(batch.serials).size).toBe(10_000);
    expect(batch.serials.every((s) => isSgtin96SafeSerial(s))).toBe(true);
    const numbers = batch.serials.map(Number);
    expect(numbers.every((n, i) => i === 0 || n === numbers[i - 1]! + 1)).toBe(true);
  });

  it('never overlaps concurrent batches', async () => {
    const products = [await createProduct(t, key), await createProduct(t, key)];
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.call('POST', BATCH, { key, body: { productId: products[i % 2]!.id, count: 500 } }),
      ),
    );
    const all: string[] = [];
    for (const r of results) {
      expect(r.status, r.text).toBe(201);
      all.push(...(r.body.serials as string[]));
    }
    expect(all).toHaveLength(4_000);
    expect(new Set(all).size).toBe(4_000);
    const stored = await t.cp.store.db
      .selectFrom('carrier_serials')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', t.tenants.a.id)
      .where('serial', 'in', all)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(4_000);
  });

  it('replays an Idempotency-Key without allocating again, and refuses it with another body', async () => {
    const p = await createProduct(t, key);
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await t.call('POST', BATCH, { key, headers, body: { productId: p.id, count: 4 } });
    const again = await t.call('POST', BATCH, { key, headers, body: { productId: p.id, count: 4 } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const events = (await eventsOf(t, t.tenants.a.id, 'carrier.generated')).filter(
      (e) => e.data.batchId === first.body.batchId,
    );
    expect(events).toHaveLength(1);
    const next = await allocate(t, key, p.id, 1);
    expect(Number(next.serials[0])).toBe(Number(first.body.serials[3]) + 1);
    const other = await t.call('POST', BATCH, { key, headers, body: { productId: p.id, count: 5 } });
    expect(other.status).toBe(409);
  });

  it('records carrier.generated with exportPath in the caller transaction, with its outbox row', async () => {
    const p = await createProduct(t, key);
    const batch = await allocate(t, key, p.id, 3);
    const [event] = (await eventsOf(t, t.tenants.a.id, 'carrier.generated')).filter(
      (e) => e.data.batchId === batch.batchId,
    );
    expect(event).toBeDefined();
    expect(event!.resource_type).toBe('product');
    expect(event!.resource_id).toBe(p.id);
    expect(event!.data).toEqual({
      productId: p.id,
      gtin: p.gtin,
      batchId: batch.batchId,
      allocated: 3,
      firstSerial: batch.serials[0],
      lastSerial: batch.serials[2],
      exportPath: batch.exportPath,
    });
    const outbox = await t.cp.store.db
      .selectFrom('outbox')
      .select('payload')
      .where('tenant_id', '=', t.tenants.a.id)
      .where('topic', '=', 'event')
      .execute();
    const payloads = outbox.map((o) => JSON.parse(o.payload) as { type: string; data: { batchId?: string } });
    expect(
      payloads.filter((o) => o.type === 'carrier.generated' && o.data.batchId === batch.batchId),
    ).toHaveLength(1);
    // The export path answers the batch's print file.
    const rows = await exportCsv(t, key, batch.exportPath.split('?')[1]!);
    expect(rows.map((r) => r.serial)).toEqual(batch.serials);
  });

  it('puts the product in the print loop: it can no longer be deleted', async () => {
    const p = await createProduct(t, key);
    await allocate(t, key, p.id, 1);
    const read = await t.call('GET', `/api/v2/products/${p.id}`, { key });
    expect(read.body.data.inPrintLoop).toBe(true);
    const del = await t.call('DELETE', `/api/v2/products/${p.id}`, { key });
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('PRODUCT_REFERENCED');
  });

  it("answers 404 for an unknown product and for another workspace's", async () => {
    const unknown = await t.call('POST', BATCH, { key, body: { productId: randomUUID(), count: 1 } });
    expect(unknown.status).toBe(404);
    const theirs = await createProduct(t, t.tenants.b.admin);
    const cross = await t.call('POST', BATCH, { key, body: { productId: theirs.id, count: 1 } });
    expect(cross.status).toBe(404);
    const none = await t.cp.store.db
      .selectFrom('carrier_serials')
      .select('serial')
      .where('product_id', '=', theirs.id)
      .execute();
    expect(none).toHaveLength(0);
  });

  it('refuses a voided product with 409 PRODUCT_VOIDED', async () => {
    const p = await createProduct(t, key);
    const voided = await t.call('POST', `/api/v2/products/${p.id}/void`, {
      key,
      body: { reason: 'withdrawn from sale' },
    });
    expect(voided.status, voided.text).toBe(200);
    const res = await t.call('POST', BATCH, { key, body: { productId: p.id, count: 1 } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('PRODUCT_VOIDED');
  });

  it('requires production:create', async () => {
    const p = await createProduct(t, key);
    const denied = await t.call('POST', BATCH, {
      key: t.tenants.a.readOnly,
      body: { productId: p.id, count: 1 },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('API_SCOPE_DENIED');
    expect(denied.body.error.details.required).toBe('production:create');
    expect((await t.call('POST', BATCH, { body: { productId: p.id, count: 1 } })).status).toBe(401);
  });

  it('stops at 2^38 - 1 with 422 SERIAL_SPACE_EXHAUSTED; the last serial still encodes', async () => {
    const tb = t.tenants.b;
    const p = await createProduct(t, tb.admin);
    await allocate(t, tb.admin, p.id, 1);
    await t.cp.store.db
      .updateTable('carrier_serial_counters')
      .set({ next_serial: SERIAL_LIMIT - 5 })
      .where('tenant_id', '=', tb.id)
      .execute();
    const over = await t.call('POST', BATCH, { key: tb.admin, body: { productId: p.id, count: 10 } });
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe('SERIAL_SPACE_EXHAUSTED');
    expect(over.body.error.details).toEqual({ requested: 10, available: 5 });
    const last = await allocate(t, tb.admin, p.id, 5);
    expect(last.serials[4]).toBe('274877906943');
    const rows = await exportCsv(t, tb.admin, last.exportPath.split('?')[1]!);
    expect(decodeSgtin96(rows[4]!.sgtin96_epc).serial).toBe('274877906943');
    const full = await t.call('POST', BATCH, { key: tb.admin, body: { productId: p.id, count: 1 } });
    expect(full.status).toBe(422);
    expect(full.body.error.details.available).toBe(0);
  });
});
