import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

describe.each(testDialects())('webhook management routes (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  beforeAll(async () => {
    // Nothing is delivered here: these tests are about the resources.
    t = await startTestControlPlane({ dialect, webhooks: { deliver: false } });
    admin = t.tenants.a.admin;
  });
  afterAll(() => t.close());

  const create = (body: unknown, key = admin) => t.call('POST', '/api/v2/webhooks', { key, body });

  it('creates an endpoint and shows its whsec_ secret once', async () => {
    const r = await create({
      url: 'http://127.0.0.1:9/hooks',
      events: ['product.created', 'print.failed', 'product.created'],
      description: 'ERP bridge',
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      events: ['product.created', 'print.failed'],
      description: 'ERP bridge',
      enabled: true,
      disabledReason: null,
      failingSince: null,
    });
    expect(r.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await t.call('GET', `/api/v2/webhooks/${r.body.data.id}`, { key: admin });
    expect(read.status).toBe(200);
    expect(read.body.data.secret).toBeUndefined();
    expect(read.text).not.toContain(r.body.data.secret);
    const list = await t.call('GET', '/api/v2/webhooks', { key: admin });
    expect(list.text).not.toContain(r.body.data.secret);
  });

  it('refuses a retired event type with 422 RETIRED_EVENT_TYPE naming its replacement', async () => {
    const r = await create({ url: 'http://127.0.0.1:9/', events: ['product.created', 'passport.published'] });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('RETIRED_EVENT_TYPE');
    expect(r.body.error.message).toContain('product.published');
    expect(r.body.error.details).toMatchObject({
      eventType: 'passport.published',
      replacement: 'product.published',
    });
  });

  it('refuses a non-catalogue event type with 422 UNKNOWN_EVENT_TYPE listing the unknown names', async () => {
    const r = await create({
      url: 'http://127.0.0.1:9/',
      events: ['product.created', 'product.exploded', '*'],
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('UNKNOWN_EVENT_TYPE');
    expect(r.body.error.details.unknown).toEqual(['product.exploded', '*']);
  });

  it.each([
    [{ url: 'ftp://example.com/', events: ['product.created'] }, 'url'],
    [{ url: 'not a url', events: ['product.created'] }, 'url'],
    [{ events: ['product.created'] }, 'url'],
    [{ url: 'http://127.0.0.1:9/', events: [] }, 'events'],
    [{ url: 'http://127.0.0.1:9/' }, 'events'],
  ])('refuses %j with 400 VALIDATION_ERROR naming %s', async (body, field) => {
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details.field).toBe(field);
  });

  it('asks for webhooks:manage (403 API_SCOPE_DENIED) and a credential (401)', async () => {
    const denied = await create(
      { url: 'http://127.0.0.1:9/', events: ['product.created'] },
      t.tenants.a.readOnly,
    );
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('API_SCOPE_DENIED');
    expect(denied.body.error.details.required).toBe('webhooks:manage');
    expect((await t.call('GET', '/api/v2/webhooks/deliveries', { key: t.tenants.a.noScopes })).status).toBe(
      403,
    );
    expect((await t.call('GET', '/api/v2/webhooks')).status).toBe(401);
  });

  it("hides another tenant's endpoint (404) from read, update, delete, rotate and retry", async () => {
    const mine = await create({ url: 'http://127.0.0.1:9/', events: ['product.created'] });
    const id = mine.body.data.id as string;
    const other = t.tenants.b.admin;
    expect((await t.call('GET', `/api/v2/webhooks/${id}`, { key: other })).status).toBe(404);
    expect(
      (await t.call('PATCH', `/api/v2/webhooks/${id}`, { key: other, body: { enabled: false } })).status,
    ).toBe(404);
    expect((await t.call('DELETE', `/api/v2/webhooks/${id}`, { key: other })).status).toBe(404);
    expect((await t.call('POST', `/api/v2/webhooks/${id}/rotate-secret`, { key: other })).status).toBe(404);
    const retry = `/api/v2/webhooks/${id}/deliveries/${crypto.randomUUID()}/retry`;
    expect((await t.call('POST', retry, { key: other })).status).toBe(404);
    expect((await t.call('POST', retry, { key: admin })).status).toBe(404);
    const list = await t.call('GET', '/api/v2/webhooks?limit=100', { key: other });
    expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(id);
    expect((await t.call('GET', `/api/v2/webhooks/${id}`, { key: admin })).status).toBe(200);
  });

  it('serves GET /webhooks/deliveries as its own operation, not as an endpoint id', async () => {
    const r = await t.call('GET', '/api/v2/webhooks/deliveries', { key: admin });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ data: [], hasMore: false, nextCursor: null });
    const bad = await t.call('GET', '/api/v2/webhooks/not-a-uuid', { key: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('id');
    expect((await t.call('PUT', '/api/v2/webhooks/deliveries', { key: admin })).status).toBe(405);
  });

  it('updates url, events, description and enabled; re-enabling clears the disabled fields', async () => {
    const { body } = await create({ url: 'http://127.0.0.1:9/a', events: ['product.created'] });
    const path = `/api/v2/webhooks/${body.data.id}`;
    const off = await t.call('PATCH', path, { key: admin, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ enabled: false, disabledReason: 'disabled_by_user' });
    expect(off.body.data.disabledAt).toEqual(expect.any(String));
    const changed = await t.call('PATCH', path, {
      key: admin,
      body: { url: 'http://127.0.0.1:9/b', events: ['print.confirmed'], description: null, enabled: true },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      url: 'http://127.0.0.1:9/b',
      events: ['print.confirmed'],
      description: null,
      enabled: true,
      disabledReason: null,
      disabledAt: null,
    });
    const retired = await t.call('PATCH', path, { key: admin, body: { events: ['print.completed'] } });
    expect(retired.status).toBe(422);
    expect(retired.body.error).toMatchObject({
      code: 'RETIRED_EVENT_TYPE',
      details: { replacement: 'print.confirmed' },
    });
    const empty = await t.call('PATCH', path, { key: admin, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('rotates the secret: a new whsec_ secret once; an Idempotency-Key repeat returns the same one', async () => {
    const { body } = await create({ url: 'http://127.0.0.1:9/', events: ['product.created'] });
    const path = `/api/v2/webhooks/${body.data.id}/rotate-secret`;
    const key = crypto.randomUUID();
    const first = await t.call('POST', path, { key: admin, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(200);
    expect(first.body.data.secret).toMatch(/^whsec_/);
    expect(first.body.data.secret).not.toBe(body.data.secret);
    expect(first.body.data.secretRotatedAt).toEqual(expect.any(String));
    const again = await t.call('POST', path, { key: admin, headers: { 'idempotency-key': key } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.secret).toBe(first.body.data.secret);
    const next = await t.call('POST', path, { key: admin });
    expect(next.body.data.secret).not.toBe(first.body.data.secret);
  });

  it('deletes an endpoint (204), after which it is not found', async () => {
    const { body } = await create({ url: 'http://127.0.0.1:9/', events: ['product.created'] });
    const path = `/api/v2/webhooks/${body.data.id}`;
    const del = await t.call('DELETE', path, { key: admin });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await t.call('GET', path, { key: admin })).status).toBe(404);
    expect((await t.call('DELETE', path, { key: admin })).status).toBe(404);
  });

  it('pages the endpoint list newest first with an opaque cursor', async () => {
    const b = t.tenants.b.admin;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await create({ url: `http://127.0.0.1:9/${i}`, events: ['product.created'] }, b);
      ids.push(r.body.data.id as string);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await t.call('GET', `/api/v2/webhooks${q}`, { key: b });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
      expect(page.body.hasMore).toBe(cursor !== null);
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const bad = await t.call('GET', '/api/v2/webhooks?cursor=bm9wZQ', { key: b });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('cursor');
    expect((await t.call('GET', '/api/v2/webhooks?limit=0', { key: b })).status).toBe(400);
    expect((await t.call('GET', '/api/v2/webhooks?limit=101', { key: b })).status).toBe(400);
  });

  it('documents every operation with its scope, and publishes the envelope as a JSON Schema for receivers', async () => {
    const doc = (await t.call('GET', '/api/v2/openapi.json')).body;
    expect(doc.paths['/api/v2/webhooks/deliveries'].get['x-required-scopes']).toEqual(['webhooks:manage']);
    expect(
      doc.paths['/api/v2/webhooks/{id}/deliveries/{deliveryId}/retry'].post.responses['202'],
    ).toBeDefined();
    expect(doc.paths['/api/v2/webhooks'].post.responses['422'].description).toContain('RETIRED_EVENT_TYPE');
    const envelope = await t.call('GET', '/api/v2/json-schemas/WebhookEnvelope.json');
    expect(envelope.status).toBe(200);
    expect(envelope.body.required).toEqual(['id', 'type', 'timestamp', 'apiVersion', 'data']);
  });

  it('records an audit entry per command, never with the secret', async () => {
    const { body } = await create({ url: 'http://127.0.0.1:9/audit', events: ['product.created'] });
    const id = body.data.id as string;
    const rotated = await t.call('POST', `/api/v2/webhooks/${id}/rotate-secret`, { key: admin });
    await t.call('DELETE', `/api/v2/webhooks/${id}`, { key: admin });
    const rows = await t.cp.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('resource_id', '=', id)
      .orderBy('occurred_at')
      .execute();
    expect(rows.map((r) => r.action)).toEqual([
      'webhook_endpoint.created',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.deleted',
    ]);
    for (const r of rows) {
      expect(r.details ?? '').not.toContain(body.data.secret);
      expect(r.details ?? '').not.toContain(rotated.body.data.secret);
    }
  });
});
