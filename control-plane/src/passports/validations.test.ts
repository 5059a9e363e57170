import { createHash, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalJson, createProof, verificationMethodId } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import {
  command,
  keyWith,
  livePassport,
  randomKey,
  readyProduct,
  signedCredential,
  vectorJson,
  vectorKey,
  vectorText,
} from '@dpp/testkit/passports';
import { isReadyToPrint } from './readiness.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe.each(testDialects())('POST/GET /api/v2/passports/{id}/validations (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 600;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  const anchor = (id: string, body: unknown, k = key()) =>
    t.call('POST', `/api/v2/passports/${id}/validations`, { key: k, body });
  const entries = async (id: string) =>
    (
      await t.cp.store.db
        .selectFrom('passport_validations')
        .select('event_id')
        .where('product_id', '=', id)
        .execute()
    ).length;

  it('refuses the W3C signed vector with 422 EUDIW_INCOMPATIBLE_DID_METHOD (an https issuer), writing nothing', async () => {
    const p = await readyProduct(t, key(), ++n);
    const vc = vectorJson('vc-di-eddsa/eddsa-jcs-2022/signedJCS.json');
    const r = await anchor(p.id, { vc });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({
      code: 'EUDIW_INCOMPATIBLE_DID_METHOD',
      details: { issuer: 'https://vc.example/issuers/5678' },
    });
    expect(await entries(p.id)).toBe(0);
  });

  it('anchors the vector credential re-issued by the vector key as did:key: 201 upi, digest, anchoredAt; the log has VALIDATION_RESULT_ANCHORED', async () => {
    const p = await readyProduct(t, key(), ++n);
    const vc = signedCredential();
    expect(vc.issuer).toBe('did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2');
    const r = await anchor(p.id, { vc, signatureAlgorithm: 'Ed25519' });
    expect(r.status).toBe(201);
    expect(r.body.upi).toMatch(
      new RegExp(`/01/${p.body.gtin as string}/21/${p.body.serialNumber as string}$`),
    );
    expect(r.body.digest).toBe(sha256(canonicalJson(vc)));
    expect(Date.parse(r.body.anchoredAt)).not.toBeNaN();
    const log = await t.call('GET', `/api/v2/passports/${p.id}/lifecycle-log`, { key: key() });
    expect(log.body.entries).toContainEqual(
      expect.objectContaining({
        type: 'VALIDATION_RESULT_ANCHORED',
        data: expect.objectContaining({ digest: r.body.digest, eventId: r.body.eventId }),
      }),
    );
    const list = await t.call('GET', `/api/v2/passports/${p.id}/validations`, { key: key() });
    expect(list.body.validations).toEqual([
      {
        eventId: r.body.eventId,
        occurredAt: r.body.anchoredAt,
        digest: r.body.digest,
        signatureAlgorithm: 'Ed25519',
        jrcAnchor: null,
        issuer: vc.issuer,
        types: ['VerifiableCredential', 'AlumniCredential'],
      },
    ]);
  });

  it('the digest is deterministic: re-anchoring the same VC (keys in another order) gives the same digest and entry (201, the one status the spec gives)', async () => {
    const p = await readyProduct(t, key(), ++n);
    const vc = signedCredential();
    const first = await anchor(p.id, { vc });
    const reordered = Object.fromEntries(Object.entries(vc).reverse());
    const again = await anchor(p.id, { vc: reordered });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await entries(p.id)).toBe(1);
    const list = await t.call('GET', `/api/v2/passports/${p.id}/validations`, { key: key() });
    expect(list.body.validations[0].signatureAlgorithm).toBe('ECDSA-P-256'); // the spec's default
  });

  const jcsCases = readdirSync(
    resolve(
      process.env.DPP_VECTORS_DIR ?? new URL('../../../../shared/vectors/', import.meta.url).pathname,
      'jcs/input',
    ),
  );
  it.each(jcsCases)(
    'digest follows RFC 8785 exactly (vector jcs/%s inside credentialSubject)',
    async (file) => {
      const p = await readyProduct(t, key(), ++n);
      const input = vectorJson<unknown>(`jcs/input/${file}`);
      const vc = signedCredential({ credentialSubject: { id: 'urn:example:subject', data: input } });
      const r = await anchor(p.id, { vc });
      expect(r.status).toBe(201);
      // The expected canonical form, built from the vector's output bytes, not from our canonicalizer.
      const placeholder = canonicalJson({
        ...vc,
        credentialSubject: { id: 'urn:example:subject', data: '__JCS__' },
      });
      const expected = placeholder.replace('"__JCS__"', vectorText(`jcs/output/${file}`));
      expect(r.body.digest).toBe(sha256(expected));
    },
  );

  it.each([
    [
      'a changed claim',
      () => ({ ...signedCredential(), name: 'Alumni Credentiak' }),
      /signature does not match/,
    ],
    [
      'a proof set',
      () => {
        const vc = signedCredential();
        return { ...vc, proof: [vc.proof] };
      },
      /single proof/,
    ],
    [
      'no proof',
      () => {
        const { proof: _p, ...vc } = signedCredential();
        return vc;
      },
      /no proof/,
    ],
    [
      'proofPurpose authentication',
      () => {
        const k = vectorKey();
        const { proof: _p, ...unsigned } = signedCredential();
        return createProof(unsigned, {
          privateKey: k.seed,
          verificationMethod: verificationMethodId(k.did),
          proofPurpose: 'authentication',
        });
      },
      /proofPurpose/,
    ],
    [
      'a verificationMethod of another DID than the issuer',
      () => {
        const other = randomKey();
        const { proof: _p, ...unsigned } = signedCredential();
        return createProof(unsigned, {
          privateKey: other.seed,
          verificationMethod: verificationMethodId(other.did),
        });
      },
      /not the issuer DID/,
    ],
    [
      'another cryptosuite',
      () => {
        const vc = signedCredential();
        return { ...vc, proof: { ...(vc.proof as object), cryptosuite: 'ecdsa-jcs-2019' } };
      },
      /cryptosuite/,
    ],
  ])(
    'refuses %s with 422 VALIDATION_CREDENTIAL_NOT_VERIFIED before any write',
    async (_name, make, reason) => {
      const p = await readyProduct(t, key(), ++n);
      const r = await anchor(p.id, { vc: make() });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('VALIDATION_CREDENTIAL_NOT_VERIFIED');
      expect(r.body.error.details.reason).toMatch(reason);
      expect(await entries(p.id)).toBe(0);
      const log = await t.call('GET', `/api/v2/passports/${p.id}/lifecycle-log`, { key: key() });
      expect(log.body.entries).toEqual([]);
    },
  );

  it.each([
    ['did:web', 'did:web:issuer.example.com'],
    ['did:ebsi', 'did:ebsi:zvHWX359A3CvfJnCYaAiAde'],
    ['did:example', 'did:example:123'],
  ])('refuses a %s issuer with 422 EUDIW_INCOMPATIBLE_DID_METHOD', async (method, did) => {
    const p = await readyProduct(t, key(), ++n);
    const r = await anchor(p.id, { vc: { ...signedCredential(), issuer: did } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('EUDIW_INCOMPATIBLE_DID_METHOD');
    expect(r.body.error.details.method).toBe(method);
  });

  it('names a missing credential member with 400 VALIDATION_ERROR', async () => {
    const p = await readyProduct(t, key(), ++n);
    const { validFrom: _v, ...noDate } = signedCredential();
    const r = await anchor(p.id, { vc: noDate });
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'vc.issuanceDate' } });
    const { credentialSubject: _s, ...noSubject } = signedCredential();
    expect((await anchor(p.id, { vc: noSubject })).body.error.details.field).toBe('vc.credentialSubject');
    expect((await anchor(p.id, {})).body.error.details.field).toBe('vc');
  });

  it('accepts dpp:edit or supply_chain:edit, not passport:write; another tenant gets 404', async () => {
    const p = await readyProduct(t, key(), ++n);
    const vc = signedCredential();
    const denied = await anchor(p.id, { vc }, await keyWith(t, ['passport:write']));
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.required).toBe('dpp:edit or supply_chain:edit');
    expect((await anchor(p.id, { vc }, t.tenants.b.admin)).status).toBe(404);
    expect(
      (await t.call('GET', `/api/v2/passports/${p.id}/validations`, { key: t.tenants.b.admin })).status,
    ).toBe(404);
    expect((await anchor(p.id, { vc }, await keyWith(t, ['supply_chain:edit']))).status).toBe(201);
    expect((await anchor(randomUUID(), { vc })).status).toBe(404);
  });

  it('readyToPrint: true only with a validation and the passport live; the same as isReadyToPrint', async () => {
    const p = await livePassport(t, key(), ++n);
    const ready = async () => {
      const r = await t.call('GET', `/api/v2/passports/${p.id}/validations`, {
        key: await keyWith(t, ['dpp:read']),
      });
      expect(await isReadyToPrint(t.cp.store.db, t.tenants.a.id, p.id)).toBe(r.body.readyToPrint);
      return r.body.readyToPrint as boolean;
    };
    expect(await ready()).toBe(false); // published, no validation
    expect((await anchor(p.id, { vc: signedCredential() })).status).toBe(201);
    expect(await ready()).toBe(true);
    expect((await command(t, p.id, 'SUBMIT')).status).toBe(200);
    expect(await ready()).toBe(false); // under review: the public route is 404
    await command(t, p.id, 'APPROVE');
    await command(t, p.id, 'PUBLISH', { disclosureTier: 'public' });
    expect(await ready()).toBe(true);
    await command(t, p.id, 'SUSPEND', { reason: 'Quality hold on the line' });
    expect(await ready()).toBe(false);
    // Another tenant's passport is never ready for this one.
    expect(await isReadyToPrint(t.cp.store.db, t.tenants.b.id, p.id)).toBe(false);
    // A validation without a published version is not enough either.
    const unpublished = await readyProduct(t, key(), ++n);
    await anchor(unpublished.id, { vc: signedCredential() });
    expect(await isReadyToPrint(t.cp.store.db, t.tenants.a.id, unpublished.id)).toBe(false);
  });
});
