import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

describe.each(testDialects())('API keys through the API (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  async function keyId(name: string, key = t.tenants.a.admin): Promise<string> {
    const r = await t.call('GET', '/api/v2/api-keys', { key });
    return r.body.data.find((k: { name: string }) => k.name === name).id;
  }

  it('lists keys without secrets', async () => {
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(3);
    expect(r.text).not.toContain(t.tenants.a.admin);
    expect(r.body.data[0]).toMatchObject({ prefix: expect.stringMatching(/^dpp_sk_/), revokedAt: null });
  });

  it('rotates a key: old id revoked, a new data.id whose secret works with the same scopes', async () => {
    const oldId = await keyId('read-only');
    const r = await t.call('POST', `/api/v2/api-keys/${oldId}/rotate`, { key: t.tenants.a.admin });
    expect(r.status).toBe(201);
    expect(r.body.data.id).not.toBe(oldId);
    expect(r.body.data.rotatedFrom).toBe(oldId);
    expect(r.body.data.scopes).toEqual(['products:read']);
    expect((await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.readOnly })).status).toBe(401);
    const fresh = await t.call('GET', '/api/v2/api-keys', { key: r.body.data.secret });
    expect(fresh.status).toBe(403); // authenticated, but products:read does not manage keys
    const old = await t.call('GET', `/api/v2/api-keys/${oldId}`, { key: t.tenants.a.admin });
    expect(old.body.data.revokedAt).not.toBeNull();
    const again = await t.call('POST', `/api/v2/api-keys/${oldId}/rotate`, { key: t.tenants.a.admin });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('ALREADY_REVOKED');
  });

  it('revokes a key once; the second revoke is 409 ALREADY_REVOKED and changes nothing', async () => {
    const id = await keyId('no-scopes');
    const first = await t.call('POST', `/api/v2/api-keys/${id}/revoke`, { key: t.tenants.a.admin });
    expect(first.status).toBe(200);
    const second = await t.call('POST', `/api/v2/api-keys/${id}/revoke`, { key: t.tenants.a.admin });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('ALREADY_REVOKED');
    const after = await t.call('GET', `/api/v2/api-keys/${id}`, { key: t.tenants.a.admin });
    expect(after.body.data.revokedAt).toBe(first.body.data.revokedAt);
  });

  it('refuses a malformed id with 400 VALIDATION_ERROR naming the field', async () => {
    const r = await t.call('GET', '/api/v2/api-keys/not-a-uuid', { key: t.tenants.a.admin });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details.field).toBe('id');
  });
});
