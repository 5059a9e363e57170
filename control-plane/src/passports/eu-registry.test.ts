/**
 * registerDPP: a published passport whose Digital Link was registered goes to the EU registry connector once per
 * version; production refuses it as the spec says; no connector, the sandbox, or a registry that does not accept
 * it is 503 REGISTRY_UNAVAILABLE and records nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { livePassport } from '@dpp/testkit/passports';
import { startReceiver, type TestReceiver } from '@dpp/testkit/webhooks';

describe.each(testDialects())('registerDPP in development and test (%s)', (dialect) => {
  let t: TestControlPlane;
  let registry: TestReceiver;
  let n = 900;
  const key = () => t.tenants.a.admin;
  const register = (id: string, k = key()) => t.call('POST', `/api/v2/dpps/${id}/register`, { key: k });
  beforeAll(async () => {
    registry = await startReceiver(() => ({
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ registrationId: 'EU-REG-0001' }),
    }));
    t = await startTestControlPlane({ dialect, env: { EU_REGISTRY_URL: `${registry.url}/registrations` } });
  });
  afterAll(async () => {
    await t?.close();
    await registry?.close();
  });

  it('sends the registration record once per version and records what the registry accepted', async () => {
    const p = await livePassport(t, key(), ++n);
    const before = registry.received.length;
    const first = await register(p.id);
    expect(first.status, first.text).toBe(201);
    expect(first.body.data).toMatchObject({ dppId: p.id, version: 1, registryReference: 'EU-REG-0001' });
    expect(first.body.data.uniqueProductIdentifier).toMatch(/\/01\/\d{14}\/21\//);
    const sent = registry.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/registrations');
    expect(sent[0]!.headers['idempotency-key']).toBe(`${p.id}:${first.body.data.versionId}`);
    const record = JSON.parse(sent[0]!.body);
    expect(record).toMatchObject({
      uniqueProductIdentifier: first.body.data.uniqueProductIdentifier,
      version: 1,
      passportUrl: expect.stringContaining(`/api/v2/public/passport/${p.id}`),
    });
    expect(record.merkleRoot).toMatch(/^[0-9a-f]{64}$/);
    expect(record.registrationCredential.credentialSubject.merkleRoot).toBe(record.merkleRoot);

    const again = await register(p.id);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(registry.received.length).toBe(before + 1);
    const list = await t.call('GET', `/api/v2/dpps/${p.id}/register`, { key: key() });
    expect(list.body.data).toEqual([first.body.data]);
  });

  it('refuses a passport whose Digital Link is not registered: 422 PASSPORT_NOT_PUBLISHABLE, nothing sent', async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    const before = registry.received.length;
    const r = await register(p.id);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({
      code: 'PASSPORT_NOT_PUBLISHABLE',
      details: { published: true, digitalLinkRegistered: false },
    });
    expect(registry.received.length).toBe(before);
  });

  it('answers 503 REGISTRY_UNAVAILABLE when the registry does not accept it, and records nothing', async () => {
    const p = await livePassport(t, key(), ++n);
    registry.respond(() => 500);
    try {
      const r = await register(p.id);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: { registryStatus: 500 } });
      expect(r.headers.get('retry-after')).toBe('60');
    } finally {
      registry.respond(() => 201);
    }
    const list = await t.call('GET', `/api/v2/dpps/${p.id}/register`, { key: key() });
    expect(list.body.data).toEqual([]);
    // Once the registry is back, the same call goes through (no reference: it answered none).
    const retried = await register(p.id);
    expect(retried.status).toBe(201);
    expect(retried.body.data.registryReference).toBeNull();
  });

  it('never reaches the registry from the sandbox, and 404s an unknown passport', async () => {
    const sandbox = await register('00000000-0000-4000-8000-000000000000', t.tenants.sandbox.admin);
    expect(sandbox.status).toBe(404);
    const p = await livePassport(t, t.tenants.sandbox.admin, ++n);
    const r = await register(p.id, t.tenants.sandbox.admin);
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: { sandbox: true } });
  });
});

describe('registerDPP without a connector, and in production', () => {
  let t: TestControlPlane | null = null;
  afterAll(() => t?.close());

  it('answers 503 REGISTRY_UNAVAILABLE when no EU registry connector is configured', async () => {
    t = await startTestControlPlane({ dialect: 'sqlite' });
    const p = await livePassport(t, t.tenants.a.admin, 950);
    const r = await t.call('POST', `/api/v2/dpps/${p.id}/register`, { key: t.tenants.a.admin });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('REGISTRY_UNAVAILABLE');
  });

  it('answers 501 with no body and the code in X-Service-Error-Code in production', async () => {
    await t?.close();
    t = await startTestControlPlane({ dialect: 'sqlite', config: { env: 'production' } });
    const r = await t.call('POST', '/api/v2/dpps/00000000-0000-4000-8000-000000000000/register', {
      key: t.tenants.a.admin,
    });
    expect(r.status).toBe(501);
    expect(r.text).toBe('');
    expect(r.headers.get('x-service-error-code')).toBe('EIDAS_ACTOR_BINDING_UNAVAILABLE');
  });
});
