/**
 * Proofs outlive key rotations: a seal receipt signed before a rotation still verifies years later against
 * the key history, which keeps every key the control plane ever signed with and the window it signed in;
 * the OAuth JWKS drops a retired key after its grace, so access tokens never rest on it. A device's
 * statement, signed by the control plane, keeps every key the device had, so its old bundles verify too,
 * judged by their time against its rotations and its revocation.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, compactVerify, createLocalJWKSet, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEVICE_STATEMENT_TYPE,
  DeviceStatementPayloadSchema,
  EvidenceBundlePayloadSchema,
  SealReceiptPayloadSchema,
} from '@dpp/shared';
import {
  type HttpPrintDevice,
  HttpPrintDevice as PrintDevice,
  enrollTestDevice,
  keyRotationProof,
  newDeviceKey,
  printableProduct as journey,
  type TestControlPlane,
} from '@dpp/testkit';
import { startJobFloor } from './floor.js';

type HistoryKey = JWK & { kid: string; signingWindow: { from: string; until: string | null } };

describe('the signing key history', () => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => void ({ t, admin, dev } = await startJobFloor('sqlite')));
  afterAll(() => t?.close());

  /** Seals one new label and returns its seal receipt. */
  async function sealOne(): Promise<string> {
    const p = await journey(t.call, admin, 1);
    const job = await t.call('POST', '/api/v2/aidc/jobs', {
      key: admin,
      body: { gtin: p.gtin, serial: p.serials[0] },
    });
    expect(job.status).toBe(201);
    const c = (await dev.claim())!;
    await dev.seal(c);
    return (await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin })).body.data
      .sealReceipt as string;
  }

  const history = async () => {
    const r = await t.call('GET', '/api/v2/public/signing-keys');
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    return r.body.keys as HistoryKey[];
  };
  const kidOf = (jws: string) =>
    (JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

  it('keeps a retired key, with its signing window, after the JWKS has dropped it', async () => {
    const old = await sealOne();
    const oldKid = kidOf(old);
    const [only] = await history();
    expect(only).toMatchObject({ kid: oldKid, signingWindow: { until: null } });

    const keyring = t.cp.services.keyring;
    const newKid = await keyring.rotate();
    // The grace is over: the old key is retired for good (as a day later).
    await t.cp.store.db
      .updateTable('signing_keys')
      .set({ retired_at: new Date(Date.now() - 1000).toISOString() })
      .where('kid', '=', oldKid)
      .execute();
    await keyring.init(); // reads the keys again, as the refresh timer would

    const jwks = (await t.call('GET', '/.well-known/jwks.json')).body.keys as { kid: string }[];
    expect(jwks.map((k) => k.kid)).toEqual([newKid]);

    const keys = await history();
    expect(keys.map((k) => k.kid)).toEqual([oldKid, newKid]);
    const [k1, k2] = keys as [HistoryKey, HistoryKey];
    expect(k1.signingWindow.until).toBe(k2.signingWindow.from);
    expect(k2.signingWindow.until).toBeNull();

    // The old receipt verifies with the retired key, and was signed inside its window.
    const verified = await compactVerify(old, await importJWK(k1, 'EdDSA'));
    const receipt = SealReceiptPayloadSchema.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
    expect(receipt.sealedAt >= k1.signingWindow.from && receipt.sealedAt < k1.signingWindow.until!).toBe(
      true,
    );
    // It does not verify with the new one.
    await expect(compactVerify(old, await importJWK(k2, 'EdDSA'))).rejects.toThrow();

    // What is sealed now is signed by the new key (the device's token from the retired key no longer works:
    // it takes a new one).
    await dev.init();
    expect(kidOf(await sealOne())).toBe(newKid);
  });

  it("publishes a signed statement of a device's keys and revocation, by which its old bundles still verify", async () => {
    const device = await enrollTestDevice(t, admin, {
      name: 'line-7 (internal name)',
      printerNames: ['zebra-1'],
    });
    const line = await new PrintDevice(t.call, device).init();
    const p = await journey(t.call, admin, 1);
    await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
    const c = (await line.claim())!;
    await line.seal(c);
    const detail = await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin });
    const bundle = detail.body.data.evidence.find((e: { kind: string }) => e.kind === 'evidence_bundle')
      .payload.jws as string;

    // The device moves to a new key, then is revoked.
    const next = await newDeviceKey();
    const proof = await keyRotationProof(next, device.id);
    const rotate = (publicKeyJwk: unknown, jwt: string) =>
      t.call('POST', `/api/v2/devices/${device.id}/rotate-key`, {
        key: line.token,
        headers: { 'Idempotency-Key': randomUUID() },
        body: { publicKeyJwk, proof: jwt },
      });
    expect((await rotate(next.publicJwk, proof)).status).toBe(200);
    expect((await t.call('POST', `/api/v2/devices/${device.id}/revoke`, { key: admin })).status).toBe(200);

    const r = await t.call('GET', `/api/v2/public/devices/${device.id}/statement`);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const keys = createLocalJWKSet({ keys: await history() });
    const verified = await compactVerify(r.body.statement, keys);
    expect(verified.protectedHeader.typ).toBe(DEVICE_STATEMENT_TYPE);
    const text = new TextDecoder().decode(verified.payload);
    expect(text).not.toContain('line-7'); // no internal device name
    const s = DeviceStatementPayloadSchema.parse(JSON.parse(text));
    expect(s).toMatchObject({ deviceId: device.id, tenantId: t.tenants.a.id, revokedAt: expect.any(String) });
    expect(s.keys).toHaveLength(2);
    const [first, second] = s.keys as [(typeof s.keys)[0], (typeof s.keys)[0]];
    expect(first.validUntil).toBe(second.validFrom);
    expect(second.validUntil).toBeNull();

    // The bundle sealed before the rotation names the first key, verifies with it, inside its window and before
    // the revocation; the second key does not verify it.
    expect(decodeProtectedHeader(bundle).kid).toBe(first.kid);
    const signed = await compactVerify(bundle, await importJWK({ ...first }, 'EdDSA'));
    const b = EvidenceBundlePayloadSchema.parse(JSON.parse(new TextDecoder().decode(signed.payload)));
    expect(b.sealedAt >= first.validFrom && b.sealedAt < first.validUntil!).toBe(true);
    expect(b.sealedAt < s.revokedAt!).toBe(true);
    await expect(compactVerify(bundle, await importJWK({ ...second }, 'EdDSA'))).rejects.toThrow();

    expect((await t.call('GET', `/api/v2/public/devices/${randomUUID()}/statement`)).status).toBe(404);
  });

  it('refuses a key rotation back to a key the device had before', async () => {
    const device = await enrollTestDevice(t, admin, { printerNames: ['zebra-1'] });
    const line = await new PrintDevice(t.call, device).init();
    const proofFor = (key: Awaited<ReturnType<typeof newDeviceKey>>) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', typ: 'dpp-key-rotation+jwt' })
        .setAudience('urn:dpp:devices:rotate-key')
        .setSubject(device.id)
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(key.privateKey);
    const back = await t.call('POST', `/api/v2/devices/${device.id}/rotate-key`, {
      key: line.token,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { publicKeyJwk: device.key.publicJwk, proof: await proofFor(device.key) },
    });
    expect(back.status).toBe(400);
    expect(back.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'publicKeyJwk' } });
  });
});
