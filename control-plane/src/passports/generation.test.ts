import { randomUUID } from 'node:crypto';
import {
  createProof,
  didKeyFromPublicKey,
  ed25519PrivateKeyFromSeed,
  ed25519RawPublicKey,
  verificationMethodId,
  verifyProof,
} from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { generate, keyWith, publish, readyProduct, register, signedCredential } from '@dpp/testkit/passports';
import type { CredentialSigner } from './issuer.js';

const STAGES = [
  'load_product',
  'check_schema',
  'resolve_credentials',
  'assemble_content',
  'sign_credential',
  'persist_passport',
];

/** Battery extensions that satisfy battery 2.0.0. */
const BATTERY = {
  batteryCategory: 'ev',
  manufacturerIdentification: 'Acme Cells, 1 Main Street, Lyon',
  chemistry: 'NMC',
  ratedCapacityAh: 60,
  nominalVoltageV: 400,
  carbonFootprintKgCo2ePerKwh: 75,
  manufacturingDate: '2025-09-01',
  batteryMassKg: 420,
};

async function poll(t: TestControlPlane, key: string, requestId: string) {
  for (let i = 0; i < 200; i++) {
    const r = await t.call('GET', `/api/v2/dpp/status/${requestId}`, { key });
    if (r.body?.status === 'succeeded' || r.body?.status === 'failed') return r;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('generation did not finish');
}

describe.each(testDialects())('POST /api/v2/dpp/generate and GET /dpp/status (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 100;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  it('answers 202 with a requestId and runs the six named stages to succeeded, each with its times', async () => {
    const p = await readyProduct(t, key(), ++n);
    const r = await t.call('POST', '/api/v2/dpp/generate', {
      key: key(),
      body: {
        productId: p.id,
        strictness: 'advisory',
        region: 'EU',
        lifecycleStage: 'production',
        dppOptions: { requestId: 'erp-77' },
      },
    });
    expect(r.status).toBe(202);
    expect(r.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get('location')).toBe(`/api/v2/dpp/status/${r.body.requestId}`);
    expect(r.body.stages.map((s: { name: string }) => s.name)).toEqual(STAGES);
    const done = await poll(t, key(), r.body.requestId);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      requestId: r.body.requestId,
      productId: p.id,
      status: 'succeeded',
      stage: 'persist_passport',
      error: null,
    });
    expect(done.body.options).toMatchObject({
      strictness: 'advisory',
      region: 'EU',
      lifecycleStage: 'production',
      clientRequestId: 'erp-77',
    });
    for (const s of done.body.stages) {
      expect(s.status).toBe('succeeded');
      expect(Date.parse(s.startedAt)).toBeLessThanOrEqual(Date.parse(s.finishedAt));
      expect(s.title).toEqual(expect.any(String));
    }
    expect(Date.parse(done.body.createdAt)).toBeLessThanOrEqual(Date.parse(done.body.finishedAt));
    expect(done.body.result).toMatchObject({
      passportUid: p.id,
      contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // Optional electronics fields the product lacks are warnings, not failures.
    expect(done.body.warnings.map((w: { field: string }) => w.field)).toContain(
      'extensions.sparePartsAvailabilityYears',
    );
    const passport = await t.call('GET', `/api/v2/passports/${p.id}`, { key: key() });
    expect(passport.body).toMatchObject({
      passportUid: p.id,
      state: 'draft',
      currentVersion: 0,
      generationRequestId: r.body.requestId,
    });
  });

  it('signs the generated credential with the tenant did:key (eddsa-jcs-2022), the same key every time', async () => {
    const a = await readyProduct(t, key(), ++n);
    const b = await readyProduct(t, key(), ++n);
    const ra = await generate(t, key(), a.id);
    const rb = await generate(t, key(), b.id);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(ra.body.result.issuer).toMatch(/^did:key:z6Mk/);
    expect(rb.body.result.issuer).toBe(ra.body.result.issuer);
    const other = await readyProduct(t, t.tenants.b.admin, ++n);
    const rc = await generate(t, t.tenants.b.admin, other.id);
    expect(rc.body.result.issuer).not.toBe(ra.body.result.issuer);
  });

  it('refuses a product that is not ready_for_dpp with 422 INVALID_STATE_TRANSITION, and an unknown one with 404', async () => {
    const created = await t.call('POST', '/api/v2/products', {
      key: key(),
      body: {
        name: 'Draft',
        description: 'A product still in draft',
        category: 'electronics',
        gtin: '4006381333931',
        serialNumber: 'D1',
        extensions: {
          energyEfficiencyClass: 'B',
          annualEnergyConsumptionKwh: 1,
          repairabilityScore: 1,
          weeeCategory: 'lamps',
        },
      },
    });
    const r = await generate(t, key(), created.body.id);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({
      code: 'INVALID_STATE_TRANSITION',
      details: { from: 'draft', required: 'ready_for_dpp' },
    });
    expect((await generate(t, key(), randomUUID())).status).toBe(404);
    expect((await generate(t, t.tenants.b.admin, created.body.id)).status).toBe(404);
  });

  it('needs dpp:edit: passport:write and supply_chain:edit do not satisfy it; status needs dpp:read', async () => {
    const p = await readyProduct(t, key(), ++n);
    for (const scope of ['passport:write', 'supply_chain:edit']) {
      const r = await generate(t, await keyWith(t, [scope]), p.id);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'API_SCOPE_DENIED', details: { required: 'dpp:edit' } });
    }
    const ok = await generate(t, await keyWith(t, ['dpp:edit']), p.id);
    expect(ok.status).toBe(200);
    expect(
      (await t.call('GET', `/api/v2/dpp/status/${ok.body.requestId}`, { key: t.tenants.a.readOnly })).status,
    ).toBe(403);
    expect(
      (
        await t.call('GET', `/api/v2/dpp/status/${ok.body.requestId}`, {
          key: await keyWith(t, ['dpp:read']),
        })
      ).status,
    ).toBe(200);
    // Another tenant cannot see the request.
    expect(
      (await t.call('GET', `/api/v2/dpp/status/${ok.body.requestId}`, { key: t.tenants.b.admin })).status,
    ).toBe(404);
  });

  it('validates the body: unknown fields, a bad DID, a bad strictness are 400 naming the field', async () => {
    const p = await readyProduct(t, key(), ++n);
    const cases: [Record<string, unknown>, string][] = [
      [{ productId: p.id, dppOptions: { manufacturerDid: 'acme' } }, 'dppOptions.manufacturerDid'],
      [{ productId: p.id, strictness: 'lenient' }, 'strictness'],
      [{ productId: 'nope' }, 'productId'],
      [{ productId: p.id, anchor: true }, 'body'],
    ];
    for (const [body, field] of cases) {
      const r = await t.call('POST', '/api/v2/dpp/generate', { key: key(), body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(r.body.error.details.field).toBe(field);
    }
  });

  it('anchorToBlockchain: 503 ANCHORING_UNAVAILABLE outside the sandbox (no chain), ignored in the sandbox', async () => {
    const p = await readyProduct(t, key(), ++n);
    const r = await generate(t, key(), p.id, { dppOptions: { anchorToBlockchain: true } });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('ANCHORING_UNAVAILABLE');
    const s = await readyProduct(t, t.tenants.sandbox.admin, ++n);
    const ok = await generate(t, t.tenants.sandbox.admin, s.id, { dppOptions: { anchorToBlockchain: true } });
    expect(ok.status).toBe(200);
    expect(ok.body.anchoring).toEqual({
      requested: true,
      performed: false,
      reason: 'ignored in the sandbox, which never anchors',
    });
  });

  it('strictness strict fails check_schema with EXTENSIONS_REQUIRED when optional fields are missing; later stages are skipped', async () => {
    const p = await readyProduct(t, key(), ++n);
    const r = await generate(t, key(), p.id, { strictness: 'strict' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('EXTENSIONS_REQUIRED');
    expect(r.body.error.details.status).toMatch(/^\/api\/v2\/dpp\/status\//);
    const status = await t.call('GET', r.body.error.details.status, { key: key() });
    expect(status.body.status).toBe('failed');
    expect(status.body.stage).toBe('check_schema');
    expect(status.body.stages.map((s: { status: string }) => s.status)).toEqual([
      'succeeded',
      'failed',
      'skipped',
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(status.body.error.code).toBe('EXTENSIONS_REQUIRED');
    // No passport was created.
    expect((await t.call('GET', `/api/v2/passports/${p.id}`, { key: key() })).body.error.code).toBe(
      'PASSPORT_NOT_FOUND',
    );
  });

  it('a battery without its declaration of conformity is 422 MISSING_REQUIRED_CREDENTIALS (issued false); anchoring it lets generation succeed', async () => {
    const p = await readyProduct(t, key(), ++n, { category: 'battery', extensions: BATTERY });
    const r = await generate(t, key(), p.id);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({
      code: 'MISSING_REQUIRED_CREDENTIALS',
      details: { missingCredentials: ['EUDeclarationOfConformityCredential'], issued: false },
    });
    const vc = signedCredential({ type: ['VerifiableCredential', 'EUDeclarationOfConformityCredential'] });
    expect(
      (await t.call('POST', `/api/v2/passports/${p.id}/validations`, { key: key(), body: { vc } })).status,
    ).toBe(201);
    const ok = await generate(t, key(), p.id);
    expect(ok.status).toBe(200);
    expect(ok.body.result.sections).toContain('credentials');
    // Battery compliance is quarantined: the passport publishes, but it cannot be registered.
    expect((await publish(t, key(), p.id)).status).toBe(201);
    const reg = await register(t, key(), p.id);
    expect(reg.status).toBe(503);
    expect(reg.body.error).toMatchObject({
      code: 'COMPLIANCE_EVALUATION_UNAVAILABLE',
      details: { passportType: 'battery' },
    });
  });

  it('a product with a request still running gets that request back', async () => {
    const p = await readyProduct(t, key(), ++n);
    await t.cp.generation.stop();
    try {
      const first = await t.call('POST', '/api/v2/dpp/generate', { key: key(), body: { productId: p.id } });
      const second = await t.call('POST', '/api/v2/dpp/generate', { key: key(), body: { productId: p.id } });
      expect([first.status, second.status]).toEqual([202, 202]);
      expect(second.body.requestId).toBe(first.body.requestId);
      expect(first.body.status).toBe('queued');
      expect(first.body.stage).toBeNull();
      expect(first.body.stages.every((s: { status: string }) => s.status === 'pending')).toBe(true);
    } finally {
      t.cp.generation.start();
    }
    const again = await generate(t, key(), p.id);
    expect(again.body.status).toBe('succeeded');
  });
});

describe.each(testDialects())('issuance faults (%s)', (dialect) => {
  const failing: CredentialSigner = {
    sign: async () => {
      throw new Error('signing service unreachable');
    },
  };
  const seed = new Uint8Array(32).fill(7);
  const strangerDid = didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed)));
  /** Signs with a key that is not the tenant's: a credential that cannot be confirmed. */
  const impostor: CredentialSigner = {
    sign: async (unsigned) =>
      createProof(
        { ...unsigned, issuer: strangerDid },
        { privateKey: seed, verificationMethod: verificationMethodId(strangerDid) },
      ),
  };

  it.each([
    ['a signer that fails: 502 ISSUANCE_FAILED', failing, 'ISSUANCE_FAILED', 'sign_credential'],
    [
      'a credential not verifying against the tenant DID: 502 ISSUANCE_NOT_CONFIRMED',
      impostor,
      'ISSUANCE_NOT_CONFIRMED',
      'persist_passport',
    ],
  ])(
    '%s, with details.status linking the request; no passport issued',
    async (_name, signer, code, stage) => {
      const t = await startTestControlPlane({ dialect, passports: { signer } });
      try {
        const p = await readyProduct(t, t.tenants.a.admin, 1);
        const r = await generate(t, t.tenants.a.admin, p.id);
        expect(r.status).toBe(502);
        expect(r.body.error.code).toBe(code);
        expect(r.body.error.details).toMatchObject({ issued: false, stage });
        expect(r.body.error.details.status).toBe(
          `/api/v2/dpp/status/${r.headers.get('location')!.split('/').pop()}`,
        );
        const status = await t.call('GET', r.body.error.details.status, { key: t.tenants.a.admin });
        expect(status.body).toMatchObject({ status: 'failed', stage, error: { code } });
        expect(status.body.stages.find((s: { name: string }) => s.name === stage).status).toBe('failed');
        const passport = await t.call('GET', `/api/v2/passports/${p.id}`, { key: t.tenants.a.admin });
        expect(passport.body.error.code).toBe('PASSPORT_NOT_FOUND');
        // Without Prefer: wait the call is 202 and the failure is in the status.
        const queued = await t.call('POST', '/api/v2/dpp/generate', {
          key: t.tenants.a.admin,
          body: { productId: p.id },
        });
        expect(queued.status).toBe(202);
      } finally {
        await t.close();
      }
    },
  );

  it('the local signer produces a credential that verifies (the control for the fault cases)', async () => {
    const t = await startTestControlPlane({ dialect });
    try {
      const p = await readyProduct(t, t.tenants.a.admin, 1);
      const r = await generate(t, t.tenants.a.admin, p.id);
      expect(r.status).toBe(200);
      const row = await t.cp.store.db
        .selectFrom('passports')
        .select('generated_credential')
        .where('product_id', '=', p.id)
        .executeTakeFirstOrThrow();
      const credential = JSON.parse(row.generated_credential) as Record<string, unknown>;
      expect(verifyProof(credential)).toEqual({ verified: true });
      expect(credential.issuer).toBe(r.body.result.issuer);
    } finally {
      await t.close();
    }
  });
});
