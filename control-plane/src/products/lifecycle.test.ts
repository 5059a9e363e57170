import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { productBody } from '@dpp/testkit/products';

describe.each(testDialects())('product lifecycle and void (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 7000;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  async function newProduct(): Promise<string> {
    const r = await t.call('POST', '/api/v2/products', { key: t.tenants.a.admin, body: productBody(++n) });
    return r.body.id as string;
  }
  const transition = (id: string, body: unknown, key = t.tenants.a.admin) =>
    t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, { key, body });
  const voidIt = (id: string, body: unknown) =>
    t.call('POST', `/api/v2/products/${id}/void`, { key: t.tenants.a.admin, body });

  it('moves draft -> validated -> ready_for_dpp, the reason on the version and the product.updated event', async () => {
    const id = await newProduct();
    const v = await transition(id, { stage: 'validated', reason: 'QA passed' });
    expect(v.status).toBe(200);
    expect(v.body.data).toMatchObject({ status: 'Validated', lifecycleStage: 'validated', version: 2 });
    const r = await transition(id, { stage: 'ready_for_dpp' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'ReadyForDpp', lifecycleStage: 'ready_for_dpp', version: 3 });

    const events = await t.call('GET', `/api/v2/products/${id}/events`, { key: t.tenants.a.readOnly });
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual([
      'product.created',
      'product.updated',
      'product.updated',
    ]);
    expect(events.body.data[1].data).toMatchObject({
      transition: { from: 'draft', to: 'validated', reason: 'QA passed' },
      status: 'Validated',
      changes: ['lifecycleStage', 'status'],
    });
    expect(events.body.data[2].data.transition).toEqual({
      from: 'validated',
      to: 'ready_for_dpp',
      reason: null,
    });
    const versions = await t.call('GET', `/api/v2/products/${id}/versions`, { key: t.tenants.a.readOnly });
    expect(versions.body.data[1]).toMatchObject({ version: 2, change: 'transitioned', reason: 'QA passed' });
    const audit = await t.cp.store.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('resource_id', '=', id)
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      'product.lifecycle_transitioned',
      'product.lifecycle_transitioned',
    ]);
  });

  it('answers an illegal move with 422 INVALID_STATE_TRANSITION naming from, to and allowed, and changes nothing', async () => {
    const id = await newProduct();
    const skip = await transition(id, { stage: 'ready_for_dpp' });
    expect(skip.status).toBe(422);
    expect(skip.body.error).toMatchObject({
      code: 'INVALID_STATE_TRANSITION',
      details: { from: 'draft', to: 'ready_for_dpp', allowed: ['validated'] },
    });
    expect((await transition(id, { stage: 'draft' })).body.error.details.allowed).toEqual(['validated']);
    await transition(id, { stage: 'validated' });
    const again = await transition(id, { stage: 'validated' });
    expect(again.status).toBe(422);
    await transition(id, { stage: 'ready_for_dpp' });
    for (const stage of ['validated', 'draft', 'dpp_issued', 'archived']) {
      const back = await transition(id, { stage });
      expect(back.status, stage).toBe(422);
      expect(back.body.error.details).toEqual({ from: 'ready_for_dpp', to: stage, allowed: [] });
    }
    const read = await t.call('GET', `/api/v2/products/${id}`, { key: t.tenants.a.admin });
    expect(read.body.data).toMatchObject({ lifecycleStage: 'ready_for_dpp', version: 3 });
  });

  it('refuses an unknown stage and a missing stage with 400, and needs products:edit', async () => {
    const id = await newProduct();
    const unknown = await transition(id, { stage: 'published' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe('stage');
    expect((await transition(id, {})).status).toBe(400);
    const denied = await transition(id, { stage: 'validated' }, t.tenants.a.readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.required).toBe('products:edit');
  });

  it('voids with a required reason: terminal, audited, evented; a second void is a plain 409', async () => {
    const id = await newProduct();
    await transition(id, { stage: 'validated' });
    const noReason = await voidIt(id, {});
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.details.field).toBe('reason');
    expect((await voidIt(id, { reason: '   ' })).status).toBe(400);

    const r = await voidIt(id, { reason: 'Damaged in transit' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      status: 'Voided',
      voidReason: 'Damaged in transit',
      lifecycleStage: 'validated',
    });
    expect(r.body.data.voidedAt).toBeTruthy();

    const audit = await t.cp.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('resource_id', '=', id)
      .where('action', '=', 'product.voided')
      .execute();
    expect(audit).toHaveLength(1);
    expect(JSON.parse(audit[0]!.details!)).toMatchObject({ reason: 'Damaged in transit' });
    const events = await t.call('GET', `/api/v2/products/${id}/events`, { key: t.tenants.a.readOnly });
    expect(events.body.data.at(-1)).toMatchObject({
      type: 'product.updated',
      data: { voided: true, reason: 'Damaged in transit', status: 'Voided' },
    });

    const twice = await voidIt(id, { reason: 'again' });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBeUndefined();
    expect(twice.body.error.details.reason).toBe('already_voided');
    const move = await transition(id, { stage: 'ready_for_dpp' });
    expect(move.status).toBe(422);
    expect(move.body.error.details).toEqual({ from: 'voided', to: 'ready_for_dpp', allowed: [] });
    const versions = await t.call('GET', `/api/v2/products/${id}/versions`, { key: t.tenants.a.readOnly });
    expect(versions.body.data.map((v: { change: string }) => v.change)).toEqual([
      'created',
      'transitioned',
      'voided',
    ]);
  });

  it('replays a transition sent twice with the same Idempotency-Key instead of failing the second', async () => {
    const id = await newProduct();
    const headers = { 'Idempotency-Key': crypto.randomUUID() };
    const body = { stage: 'validated', reason: 'once' };
    const a = await t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, {
      key: t.tenants.a.admin,
      body,
      headers,
    });
    const b = await t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, {
      key: t.tenants.a.admin,
      body,
      headers,
    });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
  });

  it('pages versions and events with limit and cursor', async () => {
    const id = await newProduct();
    for (let i = 0; i < 4; i++) {
      await t.call('PATCH', `/api/v2/products/${id}`, {
        key: t.tenants.a.admin,
        body: { name: `Name ${i}` },
      });
    }
    const first = await t.call('GET', `/api/v2/products/${id}/versions?limit=2`, {
      key: t.tenants.a.readOnly,
    });
    expect(first.body.data.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(first.body.hasMore).toBe(true);
    const second = await t.call(
      'GET',
      `/api/v2/products/${id}/versions?limit=2&cursor=${first.body.nextCursor}`,
      {
        key: t.tenants.a.readOnly,
      },
    );
    expect(second.body.data.map((v: { version: number }) => v.version)).toEqual([3, 4]);
    const last = await t.call(
      'GET',
      `/api/v2/products/${id}/versions?limit=2&cursor=${second.body.nextCursor}`,
      {
        key: t.tenants.a.readOnly,
      },
    );
    expect(last.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(last.body.data.map((v: { version: number }) => v.version)).toEqual([5]);
    const events: string[] = [];
    let cursor = '';
    for (let i = 0; i < 5; i++) {
      const page = await t.call('GET', `/api/v2/products/${id}/events?limit=2${cursor}`, {
        key: t.tenants.a.readOnly,
      });
      events.push(...page.body.data.map((e: { id: string }) => e.id));
      if (!page.body.hasMore) break;
      cursor = `&cursor=${page.body.nextCursor}`;
    }
    expect(new Set(events).size).toBe(5);
    const forged = Buffer.from(JSON.stringify({ s: 'version', v: 'NaN', i: 'x' })).toString('base64url');
    const bad = await t.call('GET', `/api/v2/products/${id}/versions?cursor=${forged}`, {
      key: t.tenants.a.readOnly,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('cursor');
  });
});
