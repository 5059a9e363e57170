/**
 * Tenant issuer keys and the signer of passport credentials.
 *
 * Each tenant signs with one Ed25519 did:key (W3C CCG did:key, resolvable offline), created on first use
 * and kept in `passport_issuer_keys` (like the control plane's own keys in `signing_keys`). Credentials
 * are secured with an eddsa-jcs-2022 Data Integrity proof (W3C vc-di-eddsa §3.3).
 */
import { randomBytes } from 'node:crypto';
import {
  createProof,
  didKeyFromPublicKey,
  ed25519PrivateKeyFromSeed,
  ed25519RawPublicKey,
  verificationMethodId,
} from '@dpp/shared';
import { type Db, type SecretBox, secretContext } from '../store/index.js';

export interface IssuerKey {
  tenantId: string;
  did: string;
  /** The raw 32-byte Ed25519 seed. */
  seed: Uint8Array;
}

/**
 * Signs a credential with a tenant's issuer key. The local signer below is the one the service uses; the
 * interface is where a remote signing service (an HSM) plugs in, and where tests hand in a faulty one.
 */
export interface CredentialSigner {
  sign(unsigned: Record<string, unknown>, key: IssuerKey): Promise<Record<string, unknown>>;
}

export const localSigner: CredentialSigner = {
  sign: async (unsigned, key) =>
    createProof(unsigned, {
      privateKey: key.seed,
      verificationMethod: verificationMethodId(key.did),
      proofPurpose: 'assertionMethod',
    }),
};

/** The tenant's issuer key, created on first use (a concurrent creator's key wins; both read the same). */
export async function tenantIssuerKey(
  db: Db,
  tenantId: string,
  secrets: SecretBox,
  now: () => number = Date.now,
): Promise<IssuerKey> {
  const existing = await db
    .selectFrom('passport_issuer_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (existing) {
    return {
      tenantId,
      did: existing.did,
      seed: new Uint8Array(
        Buffer.from(secrets.open(existing.private_seed, secretContext.issuerSeed(tenantId)), 'base64url'),
      ),
    };
  }
  const seed = new Uint8Array(randomBytes(32));
  const did = didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed)));
  await db
    .insertInto('passport_issuer_keys')
    .values({
      tenant_id: tenantId,
      did,
      private_seed: secrets.seal(Buffer.from(seed).toString('base64url'), secretContext.issuerSeed(tenantId)),
      created_at: new Date(now()).toISOString(),
    })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute();
  return tenantIssuerKey(db, tenantId, secrets, now);
}
