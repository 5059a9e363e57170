import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, issuerDid, verificationMethodDid, verifyProof } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import {
  command,
  generated,
  keyWith,
  livePassport,
  publish,
  readyProduct,
  register,
} from '@dpp/testkit/passports';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

interface HistoryEntry {
  versionId: string;
  version: number;
  previous_version_id: string | null;
  previousHash: string | null;
  current: boolean;
  hash: string;
  contentHash: string;
  merkleRoot: string;
  amendmentReason: string;
  publishedAt: string;
  content: Record<string, unknown>;
}

/** RFC 6962 Merkle tree hash over RFC 8785 {name, content} leaves sorted by name, written from the README alone. */
function merkleRootOf(content: Record<string, unknown>): string {
  const leaves = Object.keys(content)
    .sort()
    .map((name) =>
      createHash('sha256')
        .update(Buffer.from([0]))
        .update(canonicalJson({ name, content: content[name] }))
        .digest(),
    );
  const mth = (d: Buffer[]): Buffer => {
    if (d.length === 0) return createHash('sha256').digest();
    if (d.length === 1) return d[0]!;
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return createHash('sha256')
      .update(Buffer.from([1]))
      .update(mth(d.slice(0, k)))
      .update(mth(d.slice(k)))
      .digest();
  };
  return mth(leaves).toString('hex');
}

/**
 * Re-verifies a version chain from GET /history alone, with nothing of the service's code: every content
 * hash, Merkle root and version hash recomputed, every link checked. Returns the problems found.
 */
function verifyChain(uid: string, versions: HistoryEntry[]): string[] {
  const problems: string[] = [];
  versions.forEach((v, i) => {
    const prev = versions[i - 1];
    if (v.version !== i + 1) problems.push(`v${v.version}: expected number ${i + 1}`);
    if (v.previous_version_id !== (prev?.versionId ?? null))
      problems.push(`v${v.version}: previous_version_id breaks the chain`);
    if (v.previousHash !== (prev?.hash ?? null))
      problems.push(`v${v.version}: previousHash breaks the chain`);
    if (sha256(canonicalJson(v.content)) !== v.contentHash)
      problems.push(`v${v.version}: contentHash does not match the content`);
    if (merkleRootOf(v.content) !== v.merkleRoot)
      problems.push(`v${v.version}: merkleRoot does not match the content`);
    const hash = sha256(
      canonicalJson({
        passportUid: uid,
        version: v.version,
        versionId: v.versionId,
        previous_version_id: v.previous_version_id,
        previousHash: v.previousHash,
        contentHash: v.contentHash,
        merkleRoot: v.merkleRoot,
        amendmentReason: v.amendmentReason,
        publishedAt: v.publishedAt,
      }),
    );
    if (hash !== v.hash) problems.push(`v${v.version}: hash does not match its fields`);
    if (v.current !== (i === versions.length - 1)) problems.push(`v${v.version}: current flag`);
  });
  return problems;
}

describe.each(testDialects())(
  'POST /api/v2/dpp/{productId}/publish, history, as-of and proofs (%s)',
  (dialect) => {
    let t: TestControlPlane;
    let n = 200;
    const key = () => t.tenants.a.admin;
    beforeAll(async () => {
      t = await startTestControlPlane({ dialect });
    });
    afterAll(() => t?.close());

    it('answers 422 INVALID_STATE_TRANSITION straight after ready_for_dpp, before generation', async () => {
      const p = await readyProduct(t, key(), ++n);
      const r = await publish(t, key(), p.id);
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({
        code: 'INVALID_STATE_TRANSITION',
        details: { from: 'ready_for_dpp', to: 'dpp_issued' },
      });
      expect((await publish(t, key(), randomUUID())).status).toBe(404);
    });

    it('needs amendmentReason of at least 10 characters (400 VALIDATION_ERROR naming it), and dpp:edit', async () => {
      const p = await readyProduct(t, key(), ++n);
      await generated(t, key(), p.id);
      for (const body of [{ amendmentReason: 'too short' }, {}]) {
        const r = await t.call('POST', `/api/v2/dpp/${p.id}/publish`, { key: key(), body });
        expect(r.status).toBe(400);
        expect(r.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { field: 'amendmentReason' },
        });
      }
      expect((await publish(t, t.tenants.a.readOnly, p.id)).status).toBe(403);
      expect((await publish(t, await keyWith(t, ['dpp:edit']), p.id)).status).toBe(201);
      // updates of a derived section are refused, naming it
      const derived = await publish(t, key(), p.id, { updates: { identifiers: { gtin: '1' } } });
      expect(derived.status).toBe(400);
      expect(derived.body.error.details.field).toBe('updates.identifiers');
    });

    it('mints version N+1 chained to N, returns passportUid, emits product.published, and leaves the command state draft', async () => {
      const p = await readyProduct(t, key(), ++n);
      await generated(t, key(), p.id);
      const v1 = await publish(t, key(), p.id);
      expect(v1.status).toBe(201);
      expect(v1.body.passportUid).toBe(p.id);
      expect(v1.body.state).toBe('draft');
      expect(v1.body.version).toMatchObject({
        version: 1,
        previous_version_id: null,
        previousHash: null,
        current: true,
      });
      const v2 = await publish(t, key(), p.id, {
        amendmentReason: 'Repair information added after launch',
        updates: {
          repair: { manualUrl: 'https://example.com/repair', spareParts: ['battery', 'screen'] },
          product: { name: 'Phone X (2nd run)' },
        },
      });
      expect(v2.status).toBe(201);
      expect(v2.body.version).toMatchObject({
        version: 2,
        previous_version_id: v1.body.version.versionId,
        previousHash: v1.body.version.hash,
      });
      expect(v2.body.version.content.repair).toEqual({
        manualUrl: 'https://example.com/repair',
        spareParts: ['battery', 'screen'],
      });
      expect(v2.body.version.content.product.name).toBe('Phone X (2nd run)');
      expect(v2.body.version.content.product.description).toBe(p.body.description);

      const events = await t.call('GET', `/api/v2/products/${p.id}/events`, { key: key() });
      const published = events.body.data.filter((e: { type: string }) => e.type === 'product.published');
      expect(published.map((e: { data: { version: number } }) => e.data.version).sort()).toEqual([1, 2]);
      const product = await t.call('GET', `/api/v2/products/${p.id}`, { key: key() });
      expect(product.body.data.everPublished).toBe(true);
      const passport = await t.call('GET', `/api/v2/passports/${p.id}`, { key: key() });
      expect(passport.body).toMatchObject({
        state: 'draft',
        currentVersion: 2,
        currentVersionId: v2.body.version.versionId,
      });
    });

    it('the version chain re-verifies from GET /history alone, and a tampered version is caught', async () => {
      const p = await readyProduct(t, key(), ++n);
      await generated(t, key(), p.id);
      for (let i = 1; i <= 4; i++) {
        const r = await publish(t, key(), p.id, {
          amendmentReason: `Amendment number ${i} of the passport`,
          updates: { revision: { n: i, note: `é ${i} ✓` } },
        });
        expect(r.status).toBe(201);
      }
      const history = await t.call('GET', `/api/v2/passports/${p.id}/history`, {
        key: await keyWith(t, ['dpp:read']),
      });
      expect(history.status).toBe(200);
      const versions = history.body.versions as HistoryEntry[];
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
      expect(verifyChain(p.id, versions)).toEqual([]);

      // The verifier is not vacuous: a change anywhere breaks it.
      const edited = structuredClone(versions);
      (edited[1]!.content.revision as { n: number }).n = 99;
      expect(verifyChain(p.id, edited)).toEqual([
        'v2: contentHash does not match the content',
        'v2: merkleRoot does not match the content',
      ]);
      const relinked = structuredClone(versions);
      relinked[2]!.previousHash = versions[0]!.hash;
      expect(verifyChain(p.id, relinked)).toContain('v3: previousHash breaks the chain');

      // A version changed in the store no longer matches its hash when read back.
      await t.cp.store.db
        .updateTable('passport_versions')
        .set({ amendment_reason: 'rewritten later' })
        .where('id', '=', versions[0]!.versionId)
        .execute();
      const after = await t.call('GET', `/api/v2/passports/${p.id}/history`, { key: key() });
      expect(verifyChain(p.id, after.body.versions)).toEqual(['v1: hash does not match its fields']);
    });

    it('history and as-of are tenant-guarded and need dpp:read; 404 PASSPORT_NOT_FOUND before generation', async () => {
      const p = await livePassport(t, key(), ++n, { register: false });
      expect(
        (await t.call('GET', `/api/v2/passports/${p.id}/history`, { key: t.tenants.b.admin })).status,
      ).toBe(404);
      const denied = await t.call('GET', `/api/v2/passports/${p.id}/history`, { key: t.tenants.a.readOnly });
      expect(denied.body.error).toMatchObject({
        code: 'API_SCOPE_DENIED',
        details: { required: 'dpp:read' },
      });
      const fresh = await readyProduct(t, key(), ++n);
      const r = await t.call('GET', `/api/v2/passports/${fresh.id}/history`, { key: key() });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('PASSPORT_NOT_FOUND');
    });

    it('as-of projects the passport at an instant: 404 only before the first version, then the version and state of the time', async () => {
      const p = await readyProduct(t, key(), ++n);
      await generated(t, key(), p.id);
      const before = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const v1 = await publish(t, key(), p.id);
      await new Promise((r) => setTimeout(r, 5));
      const between = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const v2 = await publish(t, key(), p.id, {
        amendmentReason: 'Second version with new data',
        updates: { extra: { a: 1 } },
      });
      await new Promise((r) => setTimeout(r, 5));
      const afterV2 = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      expect((await command(t, p.id, 'SUBMIT')).status).toBe(200);
      const asOf = (date: string) =>
        t.call('GET', `/api/v2/passports/${p.id}/as-of?date=${encodeURIComponent(date)}`, { key: key() });

      const none = await asOf(before);
      expect(none.status).toBe(404);
      expect(none.body.error.code).toBe('PASSPORT_NOT_FOUND');
      const first = await asOf(between);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        state: 'draft',
        version: { versionId: v1.body.version.versionId, version: 1, current: false },
        publicRoute: { status: 200 },
      });
      const second = await asOf(afterV2);
      expect(second.body).toMatchObject({
        state: 'draft',
        version: { versionId: v2.body.version.versionId, current: true },
        publicRoute: { status: 200 },
      });
      const now = await asOf(new Date(Date.now() + 1000).toISOString());
      expect(now.body).toMatchObject({
        state: 'submitted',
        version: { version: 2 },
        publicRoute: { status: 404, code: 'PASSPORT_NOT_FOUND' },
      });
      // A date alone is its start (UTC); a far past date is before the first version.
      expect((await asOf('2001-01-01')).status).toBe(404);
      const bad = await asOf('yesterday');
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.field).toBe('date');
    });

    it('serves each section with a Merkle path that recomputes the merkleRoot the publish-dpp credential signs', async () => {
      const p = await readyProduct(t, key(), ++n, { customData: { erpId: 'X-1' } });
      await generated(t, key(), p.id);
      expect(
        (
          await publish(t, key(), p.id, {
            updates: { repair: { score: 8 }, packaging: { material: 'paper' } },
          })
        ).status,
      ).toBe(201);
      const reg = await register(t, key(), p.id);
      expect(reg.status).toBe(201);
      const { credential, merkleRoot, sections } = reg.body;
      expect(sections).toEqual([
        'attributes',
        'credentials',
        'customData',
        'identifiers',
        'packaging',
        'product',
        'repair',
      ]);
      expect(credential.credentialSubject.merkleRoot).toBe(merkleRoot);
      for (const section of sections as string[]) {
        const proof = await t.call('GET', `/api/v2/passports/${p.id}/proofs/${section}`, { key: key() });
        expect(proof.status).toBe(200);
        expect(proof.body.root).toBe(merkleRoot);
        let h = createHash('sha256')
          .update(Buffer.from([0]))
          .update(canonicalJson({ name: section, content: proof.body.content }))
          .digest();
        expect(h.toString('hex')).toBe(proof.body.leafHash);
        for (const step of proof.body.path as { side: string; hash: string }[]) {
          const sibling = Buffer.from(step.hash, 'hex');
          h = createHash('sha256')
            .update(Buffer.from([1]))
            .update(step.side === 'left' ? sibling : h)
            .update(step.side === 'left' ? h : sibling)
            .digest();
        }
        expect(h.toString('hex')).toBe(merkleRoot);
      }
      expect((await t.call('GET', `/api/v2/passports/${p.id}/proofs/nothing`, { key: key() })).status).toBe(
        404,
      );
      expect(
        (await t.call('GET', `/api/v2/passports/${p.id}/proofs/repair?version=7`, { key: key() })).body.error
          .code,
      ).toBe('PASSPORT_NOT_FOUND');
    });
  },
);

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
    expect(resolved.headers.get('location')).toBe(`/p/${p.id}`);

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
