/**
 * The label proof (docs/label-proof.md): every sealed label's receipt is appended to the transparency log,
 * whose signed tree heads, inclusion and consistency proofs check out against the control plane's
 * published keys; the commissioning event points at the proof and the receipt at the event; the public
 * route serves the whole chain by GTIN + serial, says when a serial is voided and refuses what is not
 * a published, sealed label; a bundle that would publish a person's name is refused; and the sequencer
 * signs no head over a log that was rewritten.
 */
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LabelProofSchema,
  SealReceiptPayloadSchema,
  TreeHeadPayloadSchema,
  canonicalJson,
  type LabelProof,
} from '@dpp/shared';
import {
  type HttpPrintDevice,
  type TestControlPlane,
  printableProduct as journey,
  testDialects,
} from '@dpp/testkit';
import {
  LogIntegrityError,
  appendNodes,
  leafHash,
  verifyConsistency,
  verifyInclusion,
} from '@dpp/control-plane';
import { startJobFloor } from './floor.js';

const payloadOf = (jws: string): unknown =>
  JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
const hashes = (hex: string[]) => hex.map((h) => Buffer.from(h, 'hex'));

describe.each(testDialects())('the label proof and its transparency log (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => void ({ t, admin, dev } = await startJobFloor(dialect)));
  afterAll(() => t?.close());

  const log = () => t.cp.services.transparency;

  /**
   * Prints and seals `count` labels of a new product, one after another or (`together`) claimed and sealed
   * in one batch, so that one pass of the log takes them all in; the log takes them in.
   */
  async function sealLabels(
    count: number,
    together = false,
  ): Promise<{ gtin: string; serials: string[]; productId: string }> {
    const p = await journey(t.call, admin, count);
    for (const serial of p.serials) {
      expect(
        (await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } })).status,
      ).toBe(201);
      if (!together) await dev.seal((await dev.claim())!);
    }
    if (together) await dev.sealMany(await dev.claimMany([{ name: 'zebra-1', count }]));
    await log().sequence();
    return p;
  }

  const proofOf = async (gtin: string, serial: string): Promise<LabelProof> => {
    const r = await t.call('GET', `/api/v2/public/labels/${gtin}/${serial}/proof`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    return LabelProofSchema.parse(r.body);
  };

  const keys = async () =>
    createLocalJWKSet((await t.call('GET', '/api/v2/public/signing-keys')).body as JSONWebKeySet);

  it.each([
    ['one at a time', false],
    ['sealed together, taken in by one pass', true],
  ])('logs every seal receipt and proves it under a signed tree head (%s)', async (_, together) => {
    const p = await sealLabels(3, together);
    const jwks = await keys();
    for (const serial of p.serials) {
      const proof = await proofOf(p.gtin, serial);
      expect(proof.label).toMatchObject({ gtin: p.gtin, serial, status: 'sealed', voidedAt: null });
      const [seal] = proof.seals;
      const receipt = SealReceiptPayloadSchema.parse(payloadOf(seal!.sealReceipt));
      expect(receipt).toMatchObject({ gtin: p.gtin, serial, passportVersionId: seal!.passportVersion!.id });
      expect(receipt.bundleSha256).toBe(createHash('sha256').update(seal!.evidenceBundle).digest('hex'));
      await compactVerify(seal!.sealReceipt, jwks);

      // The commissioning event is the one the receipt hashed, and it points back at this proof.
      const event = seal!.epcisEvent!;
      expect(receipt.epcisEvent!.sha256).toBe(
        createHash('sha256').update(canonicalJson(event)).digest('hex'),
      );
      expect(event.certificationInfo).toBe(`${proof.issuer}/api/v2/public/labels/${p.gtin}/${serial}/proof`);

      // The receipt is a leaf of the log, under a tree head the control plane signed.
      const { protectedHeader } = await compactVerify(seal!.log!.treeHead, jwks);
      expect(protectedHeader.typ).toBe('dpp-tree-head+jws');
      const head = TreeHeadPayloadSchema.parse(payloadOf(seal!.log!.treeHead));
      expect(head).toMatchObject({
        iss: proof.issuer,
        log: `${proof.issuer}/api/v2/public/log`,
        treeSize: seal!.log!.treeSize,
      });
      const leaf = leafHash(Buffer.from(seal!.sealReceipt, 'ascii'));
      const root = Buffer.from(head.rootHash, 'hex');
      const path = hashes(seal!.log!.inclusionProof);
      expect(verifyInclusion(seal!.log!.leafIndex, head.treeSize, leaf, path, root)).toBe(true);
      expect(
        verifyInclusion(seal!.log!.leafIndex, head.treeSize, leafHash(Buffer.from('x')), path, root),
      ).toBe(false);
    }
  });

  it('grows only by appending: every earlier head is consistent with the newest', async () => {
    const before = TreeHeadPayloadSchema.parse(
      payloadOf((await t.call('GET', '/api/v2/public/log/tree-head')).body.treeHead as string),
    );
    await sealLabels(2);
    const after = TreeHeadPayloadSchema.parse(
      payloadOf((await t.call('GET', '/api/v2/public/log/tree-head')).body.treeHead as string),
    );
    expect(after.treeSize).toBe(before.treeSize + 2);
    const r = await t.call(
      'GET',
      `/api/v2/public/log/consistency?first=${before.treeSize}&second=${after.treeSize}`,
    );
    expect(r.status).toBe(200);
    const args = [before.treeSize, after.treeSize, hashes(r.body.proof as string[])] as const;
    const [oldRoot, newRoot] = [before.rootHash, after.rootHash].map((h) => Buffer.from(h, 'hex')) as [
      Buffer,
      Buffer,
    ];
    expect(verifyConsistency(...args, oldRoot, newRoot)).toBe(true);
    expect(verifyConsistency(...args, leafHash(Buffer.from('rewritten')), newRoot)).toBe(false);

    for (const [query, field] of [
      [`first=1&second=${after.treeSize + 1}`, 'second'],
      [`first=${after.treeSize}&second=1`, 'first'],
      ['first=0&second=1', 'first'],
      ['first=a&second=1', 'first'],
    ] as const) {
      const bad = await t.call('GET', `/api/v2/public/log/consistency?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(bad.body.error), query).toContain(field);
    }
  });

  it('serves a voided label’s proof, saying so, and refuses labels it may not show', async () => {
    const p = await sealLabels(1);
    const [serial] = p.serials as [string];
    const voided = await t.call('POST', `/api/v2/products/${p.productId}/void`, {
      key: admin,
      body: { reason: 'withdrawn batch' },
    });
    expect(voided.status).toBe(200);
    const proof = await proofOf(p.gtin, serial);
    expect(proof.label.status).toBe('voided');
    expect(proof.label.voidedAt).toEqual(expect.any(String));
    expect(proof.seals).toHaveLength(1);

    const unsealed = await journey(t.call, admin, 1);
    const none = await t.call('GET', `/api/v2/public/labels/${unsealed.gtin}/${unsealed.serials[0]}/proof`);
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('LABEL_PROOF_NOT_FOUND');
    const badGtin = await t.call('GET', `/api/v2/public/labels/09506000134353/1/proof`);
    expect(badGtin.body.error.code).toBe('INVALID_GTIN');
  });

  it('refuses a bundle that would publish a supervisor’s name or note', async () => {
    const p = await journey(t.call, admin, 1);
    await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
    const c = (await dev.claim())!;
    const e = dev.evidence(c);
    const human = {
      actor: { type: 'human' as const, id: 'badge-17', name: 'Ana Example' },
      method: 'supervisor' as const,
      note: 'looks fine',
      attestedAt: e.attestation.attestedAt,
    };
    const withHuman = { ...e, attestation: human } as unknown as typeof e;
    await dev.seal(c, { e: withHuman, until: 'SCAN_VERIFIED' });
    const named = await dev.result(c, 'SEALED', {
      evidence_bundle: { jws: await dev.bundle(c, withHuman, { attestation: human }) },
    });
    expect(named.status).toBe(422);
    expect(named.body.error.details.field).toBe('evidence.evidence_bundle.payload.attestation.actor.name');
    const noted = await dev.result(c, 'SEALED', {
      evidence_bundle: {
        jws: await dev.bundle(c, withHuman, {
          attestation: { ...human, actor: { type: 'human', id: 'badge-17' } },
        }),
      },
    });
    expect(noted.body.error.details.field).toBe('evidence.evidence_bundle.payload.attestation.note');
    // The agent's bundle names the supervisor by id alone: accepted, the name and note stay in the record.
    const sealed = await dev.result(c, 'SEALED', {
      evidence_bundle: { jws: await dev.bundle(c, withHuman) },
    });
    expect(sealed.status, sealed.text).toBe(200);
  });

  it('signs no new head over a log that dropped or reordered an entry', async () => {
    await sealLabels(3);
    const db = t.cp.store.db;
    const leaves = (
      await db.selectFrom('log_nodes').select('hash').where('level', '=', 0).orderBy('node_index').execute()
    ).map((r) => Buffer.from(r.hash, 'hex'));
    /** Rebuilds the stored tree over `order`, as an operator rewriting the log would. */
    const rewrite = async (order: Buffer[]) => {
      await db.deleteFrom('log_nodes').execute();
      for (const n of appendNodes(0, order, () => Buffer.alloc(32))) {
        await db
          .insertInto('log_nodes')
          .values({ level: n.level, node_index: n.index, hash: n.hash.toString('hex') })
          .execute();
      }
      await db.updateTable('transparency_log').set({ tree_size: order.length }).execute();
    };
    const p = await journey(t.call, admin, 1);
    await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
    // The test runs the sequencer itself: the control plane's own loop (its poll, or a wake-up after a seal)
    // would otherwise take the next receipt in before the log is rewritten, and find nothing to refuse after.
    await t.cp.sequencer.stop();
    await dev.seal((await dev.claim())!);

    await rewrite([leaves[1]!, leaves[0]!, ...leaves.slice(2)]);
    await expect(log().sequence()).rejects.toThrow(LogIntegrityError);
    await rewrite([leaves[0]!, ...leaves.slice(2)]);
    await expect(log().sequence()).rejects.toThrow(LogIntegrityError);
    await rewrite(leaves);
    expect(await log().sequence()).toBe('idle');
    expect(
      await db.selectFrom('seal_receipts').select('job_ref').where('leaf_index', 'is', null).execute(),
    ).toEqual([]);
  });
});
