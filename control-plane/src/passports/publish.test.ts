import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
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
