/**
 * Secrets the control plane must be able to read back (a webhook endpoint's HMAC secret, its own signing
 * keys, each tenant's credential issuer key) are sealed at rest with AES-256-GCM under `SECRETS_KEY`:
 * `enc:v1:` + base64url(12-byte IV | ciphertext | 16-byte tag). The additional data names the column and
 * the row (`webhook_endpoints.secret:<id>`), so a sealed value copied to another row does not open.
 *
 * Without a key, values are stored as they are (development, tests). A plain value read while a key is set
 * is accepted (a row from before the key) and sealed at the next start (`sealStoredSecrets`); a sealed value
 * read without the key, or with another one, is refused with an error that says so. To rotate, start with
 * the new key as `SECRETS_KEY` and the old one as `SECRETS_KEY_PREVIOUS`: values open under either, and the
 * start re-seals every stored secret under the new key. Keep the previous key for IDEMPOTENCY_TTL_HOURS more:
 * answers kept for Idempotency-Key repeats are not re-sealed, they expire.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Db } from './database.js';

const PREFIX = 'enc:v1:';

export class SecretBox {
  private constructor(
    private readonly key: Buffer | null,
    /** The key before a rotation: still opens what it sealed until `sealStoredSecrets` re-seals it. */
    private readonly previous: Buffer | null,
  ) {}

  /** Seals with `key` (32 bytes); with none, leaves values as they are. `previous` only opens. */
  static of(key: Buffer | undefined, previous?: Buffer): SecretBox {
    for (const k of [key, previous]) if (k && k.length !== 32) throw new Error('a secrets key is 32 bytes');
    if (previous && !key) throw new Error('a previous secrets key needs a current one');
    return new SecretBox(key ?? null, previous ?? null);
  }

  get sealing(): boolean {
    return this.key !== null;
  }

  /** The stored form of `plain`; `context` names the column and row it goes to. */
  seal(plain: string, context: string): string {
    if (!this.key) return plain;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The plain value of a stored one (sealed or not), under the current key or the previous one. */
  open(stored: string, context: string): string {
    return this.read(stored, context).plain;
  }

  /**
   * The plain value, and whether it should be sealed again under the current key: it is plain, or only
   * the previous key opens it.
   */
  read(stored: string, context: string): { plain: string; stale: boolean } {
    if (!stored.startsWith(PREFIX)) return { plain: stored, stale: this.key !== null };
    if (!this.key) throw new Error(`${context} is sealed, but SECRETS_KEY is not set`);
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    if (raw.length < 28) throw new Error(`${context} is not a sealed value`);
    const current = unseal(this.key, raw, context);
    if (current !== null) return { plain: current, stale: false };
    const earlier = this.previous ? unseal(this.previous, raw, context) : null;
    if (earlier !== null) return { plain: earlier, stale: true };
    throw new Error(`${context} does not open with this SECRETS_KEY (another key, or another row's value)`);
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }
}

/** AES-256-GCM open of IV | ciphertext | tag; null when the key or the additional data do not match. */
function unseal(key: Buffer, raw: Buffer, context: string): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
      .setAAD(Buffer.from(context, 'utf8'))
      .setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
}

/** The additional data of each sealed column. */
export const secretContext = {
  webhookSecret: (endpointId: string) => `webhook_endpoints.secret:${endpointId}`,
  signingKey: (kid: string) => `signing_keys.private_jwk:${kid}`,
  issuerSeed: (tenantId: string) => `passport_issuer_keys.private_seed:${tenantId}`,
};

/**
 * Seals, under the current key, the secrets stored before a key was set and those sealed under the previous
 * key (`SECRETS_KEY_PREVIOUS`, after a rotation); a no-op without a key. Run at start, after migrations;
 * each row is updated only if it still holds what was read, so replicas starting together do no harm.
 */
export async function sealStoredSecrets(db: Db, box: SecretBox): Promise<number> {
  if (!box.sealing) return 0;
  // Per sealed column: its rows as { key, value }, and the update of one row that is still `from`.
  const columns: Array<{
    context: (key: string) => string;
    rows: () => Promise<Array<{ key: string; value: string }>>;
    update: (key: string, from: string, to: string) => Promise<{ numUpdatedRows: bigint }>;
  }> = [
    {
      context: secretContext.webhookSecret,
      rows: () => db.selectFrom('webhook_endpoints').select(['id as key', 'secret as value']).execute(),
      update: (key, from, to) =>
        db
          .updateTable('webhook_endpoints')
          .set({ secret: to })
          .where('id', '=', key)
          .where('secret', '=', from)
          .executeTakeFirst(),
    },
    {
      context: secretContext.signingKey,
      rows: () => db.selectFrom('signing_keys').select(['kid as key', 'private_jwk as value']).execute(),
      update: (key, from, to) =>
        db
          .updateTable('signing_keys')
          .set({ private_jwk: to })
          .where('kid', '=', key)
          .where('private_jwk', '=', from)
          .executeTakeFirst(),
    },
    {
      context: secretContext.issuerSeed,
      rows: () =>
        db.selectFrom('passport_issuer_keys').select(['tenant_id as key', 'private_seed as value']).execute(),
      update: (key, from, to) =>
        db
          .updateTable('passport_issuer_keys')
          .set({ private_seed: to })
          .where('tenant_id', '=', key)
          .where('private_seed', '=', from)
          .executeTakeFirst(),
    },
  ];
  let sealed = 0;
  for (const column of columns) {
    for (const { key, value } of await column.rows()) {
      const { plain, stale } = box.read(value, column.context(key));
      if (!stale) continue;
      const r = await column.update(key, value, box.seal(plain, column.context(key)));
      sealed += Number(r.numUpdatedRows);
    }
  }
  return sealed;
}
