import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { createApiKey } from '../tenants/api-keys.js';

describe.each(testDialects())('authentication and authorization (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  it('answers 401 with no code for a missing credential', async () => {
    const r = await t.call('GET', '/api/v2/api-keys');
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBeUndefined();
    expect(r.body.error.message).toBeTruthy();
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401 for an unknown key, a malformed Authorization header and a revoked key', async () => {
    expect((await t.call('GET', '/api/v2/api-keys', { key: 'dpp_sk_nope' })).status).toBe(401);
    const malformed = await t.call('GET', '/api/v2/api-keys', {
      headers: { authorization: `Basic ${t.tenants.a.admin}` },
    });
    expect(malformed.status).toBe(401);
    const list = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    const noScopes = list.body.data.find((k: { name: string }) => k.name === 'no-scopes');
    expect(
      (await t.call('POST', `/api/v2/api-keys/${noScopes.id}/revoke`, { key: t.tenants.a.admin })).status,
    ).toBe(200);
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.noScopes });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBeUndefined();
  });

  it('accepts a key whose secret is shaped like a signed token (three dotted parts) as a key', async () => {
    const secret = 'seed.shaped-like.a-token';
    await createApiKey(
      t.cp.store.db,
      { tenantId: t.tenants.b.id, name: 'dotted', scopes: ['keys:manage'], secret },
      { actor: { type: 'system', id: 'test' } },
    );
    const r = await t.call('GET', '/api/v2/api-keys', { key: secret });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.map((k: { name: string }) => k.name)).toContain('dotted');
  });

  it('accepts the key as Bearer and as x-api-key', async () => {
    expect((await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin })).status).toBe(200);
    const r = await t.call('GET', '/api/v2/api-keys', { headers: { 'x-api-key': t.tenants.b.admin } });
    expect(r.status).toBe(200);
  });

  it('answers 403 API_SCOPE_DENIED with details.required (string) and details.available (array)', async () => {
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.readOnly });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('API_SCOPE_DENIED');
    expect(r.body.error.details.required).toBe('keys:manage');
    expect(r.body.error.details.available).toEqual(['products:read']);
  });

  it('answers 403 SANDBOX_EXPIRED to a sandbox tenant past expiry on every authenticated call', async () => {
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.expired.admin });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('SANDBOX_EXPIRED');
    const other = await t.call('POST', '/api/v2/api-keys/00000000-0000-4000-8000-000000000000/revoke', {
      key: t.tenants.expired.admin,
    });
    expect(other.body.error.code).toBe('SANDBOX_EXPIRED');
  });

  it("answers 404 for another tenant's resource (authorization before existence)", async () => {
    const theirs = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin });
    const id = theirs.body.data[0].id as string;
    const r = await t.call('GET', `/api/v2/api-keys/${id}`, { key: t.tenants.a.admin });
    expect(r.status).toBe(404);
    const revoke = await t.call('POST', `/api/v2/api-keys/${id}/revoke`, { key: t.tenants.a.admin });
    expect(revoke.status).toBe(404);
    expect((await t.call('GET', `/api/v2/api-keys/${id}`, { key: t.tenants.b.admin })).status).toBe(200);
  });

  it('checks scope before existence: a key without the scope gets 403, not 404', async () => {
    const r = await t.call('GET', '/api/v2/api-keys/00000000-0000-4000-8000-000000000000', {
      key: t.tenants.b.readOnly,
    });
    expect(r.status).toBe(403);
  });
});
