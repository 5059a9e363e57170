import { randomUUID } from 'node:crypto';
import { issuerDid, verificationMethodDid, verifyProof } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { generated, keyWith, livePassport, publish, readyProduct, register } from '@dpp/testkit/passports';

describe.each(testDialects())('POST /api/v2/products/{id}/publish-dpp (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 300;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  const identifiers = async (productId: string) =>
    Number(
      (
        await t.cp.store.db
          .selectFrom('dpp_identifiers')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('product_id', '=', productId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("registers the Digital Link (0 -> 1, the item resolves) and answers a VC signed by the tenant's did:key with a merkleRoot", async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    expect(await identifiers(p.id)).toBe(0);
    const gtin = p.body.gtin as string;
    expect((await t.call('GET', `/01/${gtin}/21/${p.body.serialNumber as string}`)).status).toBe(404);
    const r = await register(t, key(), p.id);
    expect(r.status).toBe(201);
    expect(await identifiers(p.id)).toBe(1);
    expect(r.body).toMatchObject({
      passportUid: p.id,
      passportType: 'generic',
      version: 1,
      publishToWallet: { requested: false, delivered: false },
    });
    expect(r.body.digitalLink).toMatch(new RegExp(`/01/${gtin}/21/${p.body.serialNumber as string}$`));
    const vc = r.body.credential;
    expect(vc.type).toEqual(['VerifiableCredential', 'DigitalProductPassportCredential']);
    expect(verifyProof(vc)).toEqual({ verified: true });
    expect(vc.proof).toMatchObject({
      type: 'DataIntegrityProof',
      cryptosuite: 'eddsa-jcs-2022',
      proofPurpose: 'assertionMethod',
    });
    expect(issuerDid(vc)).toMatch(/^did:key:z6Mk/);
    expect(verificationMethodDid(vc.proof)).toBe(issuerDid(vc));
    expect(vc.credentialSubject).toMatchObject({
      passportUid: p.id,
      merkleRoot: r.body.merkleRoot,
      id: r.body.digitalLink,
    });
    expect(
      verifyProof({ ...vc, credentialSubject: { ...vc.credentialSubject, merkleRoot: '0'.repeat(64) } })
        .verified,
    ).toBe(false);
    const resolved = await t.call('GET', `/01/${gtin}/21/${p.body.serialNumber as string}`);
    expect(resolved.status).toBe(302);
    expect(resolved.headers.get('location')).toBe(`/p/${p.id}?serial=${p.body.serialNumber as string}`);

    // Again: still one identifier, the same registration (200).
    const again = await register(t, key(), p.id);
    expect(again.status).toBe(200);
    expect(again.body.credential).toEqual(vc);
    expect(await identifiers(p.id)).toBe(1);
    // A newer version re-issues the credential for it.
    expect((await publish(t, key(), p.id, { amendmentReason: 'A second version to register' })).status).toBe(
      201,
    );
    const reissued = await register(t, key(), p.id);
    expect(reissued.status).toBe(200);
    expect(reissued.body.version).toBe(2);
    expect(reissued.body.registeredAt).toBe(r.body.registeredAt);
    expect(reissued.body.credential.credentialSubject.version).toBe(2);
    expect(await identifiers(p.id)).toBe(1);
  });

  it('requires an Idempotency-Key and replays the first answer for it', async () => {
    const p = await livePassport(t, key(), ++n, { register: false });
    const missing = await t.call('POST', `/api/v2/products/${p.id}/publish-dpp`, { key: key(), body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const k = randomUUID();
    const first = await t.call('POST', `/api/v2/products/${p.id}/publish-dpp`, {
      key: key(),
      body: { publishToWallet: true },
      headers: { 'Idempotency-Key': k },
    });
    const second = await t.call('POST', `/api/v2/products/${p.id}/publish-dpp`, {
      key: key(),
      body: { publishToWallet: true },
      headers: { 'Idempotency-Key': k },
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect(first.body.publishToWallet).toEqual({
      requested: true,
      delivered: false,
      reason: 'no wallet connector is configured',
    });
    const conflict = await t.call('POST', `/api/v2/products/${p.id}/publish-dpp`, {
      key: key(),
      body: {},
      headers: { 'Idempotency-Key': k },
    });
    expect(conflict.status).toBe(409);
  });

  it('is 403 FORBIDDEN (not API_SCOPE_DENIED) out of scope, 404 across tenants, 422 before a version is published', async () => {
    const p = await readyProduct(t, key(), ++n);
    const denied = await register(t, t.tenants.a.readOnly, p.id);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    expect((await register(t, await keyWith(t, ['dpp:edit']), p.id)).body.error.code).toBe('FORBIDDEN');
    expect((await register(t, t.tenants.b.admin, p.id)).status).toBe(404);
    const early = await register(t, await keyWith(t, ['products:edit']), p.id);
    expect(early.status).toBe(422);
    expect(early.body.error.code).toBe('INVALID_STATE_TRANSITION');
    await generated(t, key(), p.id);
    expect((await register(t, key(), p.id)).body.error.code).toBe('INVALID_STATE_TRANSITION');
  });

  it('is 503 COMPLIANCE_EVALUATION_UNAVAILABLE for a battery-marked product and a battery passportType; derives generic otherwise', async () => {
    const marked = await livePassport(t, key(), ++n, {
      register: false,
      overrides: { customData: { batteryMarked: true } },
    });
    const r = await register(t, key(), marked.id);
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({
      code: 'COMPLIANCE_EVALUATION_UNAVAILABLE',
      details: { passportType: 'battery', issued: false },
    });
    expect(await identifiers(marked.id)).toBe(0);
    const plain = await livePassport(t, key(), ++n, { register: false });
    expect((await register(t, key(), plain.id, { passportType: 'battery' })).body.error.code).toBe(
      'COMPLIANCE_EVALUATION_UNAVAILABLE',
    );
    const typed = await register(t, key(), plain.id, { passportType: 'electronics' });
    expect(typed.status).toBe(201);
    expect(typed.body.passportType).toBe('electronics');
    expect((await register(t, key(), plain.id, { passportType: 'spaceship' })).status).toBe(400);
  });
});

describe.each(testDialects())('publish-dpp in production (%s)', (dialect) => {
  it('answers 503 EIDAS_ACTOR_BINDING_UNAVAILABLE and issues nothing', async () => {
    const t = await startTestControlPlane({ dialect, config: { env: 'production' } });
    try {
      const p = await livePassport(t, t.tenants.a.admin, 1, { register: false });
      const r = await register(t, t.tenants.a.admin, p.id);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({
        code: 'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        details: { issued: false },
      });
      const rows = await t.cp.store.db.selectFrom('dpp_identifiers').selectAll().execute();
      expect(rows).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
