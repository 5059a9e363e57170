import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

describe.each(testDialects())('Idempotency-Key (%s)', (dialect) => {
  let t: TestControlPlane;
  let ids: string[];
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin });
    ids = r.body.data.filter((k: { name: string }) => k.name !== 'admin').map((k: { id: string }) => k.id);
  });
  afterAll(() => t.close());

  const auditCount = async (resourceId: string, action: string) =>
    (
      await t.cp.store.db
        .selectFrom('audit_log')
        .select('id')
        .where('resource_id', '=', resourceId)
        .where('action', '=', action)
        .execute()
    ).length;

  it('replays the first status and body for the same key and request, with no second side effect', async () => {
    const key = randomUUID();
    const headers = { 'Idempotency-Key': key };
    const first = await t.call('POST', `/api/v2/api-keys/${ids[0]}/revoke`, {
      key: t.tenants.b.admin,
      headers,
    });
    const second = await t.call('POST', `/api/v2/api-keys/${ids[0]}/revoke`, {
      key: t.tenants.b.admin,
      headers,
    });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await auditCount(ids[0]!, 'api_key.revoked')).toBe(1);
    // Without the key the same call really runs again, and meets the state machine.
    const plain = await t.call('POST', `/api/v2/api-keys/${ids[0]}/revoke`, { key: t.tenants.b.admin });
    expect(plain.status).toBe(409);
  });

  it('answers 409 when the same key comes with a different request', async () => {
    const key = randomUUID();
    const headers = { 'Idempotency-Key': key };
    const a = await t.call('POST', `/api/v2/api-keys/${ids[1]}/revoke`, { key: t.tenants.b.admin, headers });
    expect(a.status).toBe(200);
    const b = await t.call('POST', `/api/v2/api-keys/${randomUUID()}/revoke`, {
      key: t.tenants.b.admin,
      headers,
    });
    expect(b.status).toBe(409);
    expect(b.body.error.details.reason).toBe('idempotency_key_reused');
  });

  it('runs two concurrent requests with one key once', async () => {
    const other = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    const id = other.body.data.find((k: { name: string }) => k.name === 'read-only').id as string;
    const headers = { 'Idempotency-Key': randomUUID() };
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.call('POST', `/api/v2/api-keys/${id}/revoke`, { key: t.tenants.a.admin, headers }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const r of results) expect(r.body).toEqual(results[0]!.body);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(await auditCount(id, 'api_key.revoked')).toBe(1);
  });

  it('scopes keys per tenant: the same key in another tenant is independent', async () => {
    const key = randomUUID();
    const a = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    const aId = a.body.data.find((k: { name: string }) => k.name === 'no-scopes').id as string;
    const r1 = await t.call('POST', `/api/v2/api-keys/${aId}/revoke`, {
      key: t.tenants.a.admin,
      headers: { 'Idempotency-Key': key },
    });
    expect(r1.status).toBe(200);
    // Tenant B's request under the same key runs on its own (404: not B's key), it is no 409 reuse.
    const r2 = await t.call('POST', `/api/v2/api-keys/${aId}/revoke`, {
      key: t.tenants.b.admin,
      headers: { 'Idempotency-Key': key },
    });
    expect(r2.status).toBe(404);
  });

  it('refuses a key that is not a UUID with 400 VALIDATION_ERROR, changing nothing', async () => {
    const r = await t.call('POST', `/api/v2/api-keys/${randomUUID()}/revoke`, {
      key: t.tenants.b.admin,
      headers: { 'Idempotency-Key': 'abc' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details.field).toBe('Idempotency-Key');
  });
});
