import fs from 'node:fs/promises';
import { z } from 'zod';
import { TIERS } from '../config/index.js';
import type { Db } from '../store/index.js';
import { createApiKey, hashSecret } from './api-keys.js';
import { insertTenant } from './tenants.js';

/** The DPP_SEED_FILE format of DESIGN.md (development and test only). */
export const SeedFile = z.object({
  tenants: z.array(
    z.object({
      id: z.uuid(),
      name: z.string().min(1),
      tier: z.enum(TIERS),
      sandbox: z.boolean().default(false),
      sandboxExpiresAt: z.iso.datetime({ offset: true }).nullish(),
      apiKeys: z
        .array(
          z.object({
            secret: z.string().min(8),
            scopes: z.array(z.string()).default([]),
            name: z.string().optional(),
          }),
        )
        .default([]),
    }),
  ),
});
export type SeedFile = z.infer<typeof SeedFile>;

export class SeedError extends Error {
  override name = 'SeedError';
}

export async function readSeedFile(file: string): Promise<SeedFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new SeedError(`DPP_SEED_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = SeedFile.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new SeedError(`DPP_SEED_FILE: ${i.path.join('.')}: ${i.message}`);
  }
  return parsed.data;
}

/**
 * Applies a seed: tenants are created or updated by id, keys created by secret (their scopes updated when
 * the secret exists). Running it twice changes nothing.
 */
export async function applySeed(db: Db, seed: SeedFile): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const t of seed.tenants) {
      const existing = await trx.selectFrom('tenants').select('id').where('id', '=', t.id).executeTakeFirst();
      const sandboxExpiresAt = t.sandboxExpiresAt ? new Date(t.sandboxExpiresAt).toISOString() : null;
      if (existing) {
        await trx
          .updateTable('tenants')
          .set({
            name: t.name,
            tier: t.tier,
            sandbox: t.sandbox ? 1 : 0,
            sandbox_expires_at: sandboxExpiresAt,
          })
          .where('id', '=', t.id)
          .execute();
      } else {
        await insertTenant(trx, {
          id: t.id,
          name: t.name,
          tier: t.tier,
          sandbox: t.sandbox,
          sandboxExpiresAt,
        });
      }
      for (const k of t.apiKeys) {
        const hash = hashSecret(k.secret);
        const key = await trx
          .selectFrom('api_keys')
          .select(['id', 'tenant_id'])
          .where('secret_hash', '=', hash)
          .executeTakeFirst();
        if (key && key.tenant_id !== t.id)
          throw new SeedError(`DPP_SEED_FILE: a key secret of ${t.name} is used twice`);
        if (key) {
          await trx
            .updateTable('api_keys')
            .set({ scopes: JSON.stringify([...new Set(k.scopes)].sort()), revoked_at: null })
            .where('id', '=', key.id)
            .execute();
        } else {
          await createApiKey(
            trx,
            { tenantId: t.id, name: k.name ?? 'seed', scopes: k.scopes, secret: k.secret },
            { actor: { type: 'system', id: 'seed' } },
          );
        }
      }
    }
  });
}
