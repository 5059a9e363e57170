/**
 * Proofs outlive key rotations: a seal receipt signed before a rotation still verifies years later against
 * the key history, which keeps every key the control plane ever signed with and the window it signed in;
 * the OAuth JWKS drops a retired key after its grace, so access tokens never rest on it.
 */
import { compactVerify, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SealReceiptPayloadSchema } from '@dpp/shared';
import { type HttpPrintDevice, printableProduct as journey, type TestControlPlane } from '@dpp/testkit';
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
});
