import { randomUUID } from 'node:crypto';
import { type Tier, TIERS } from '../config/index.js';
import type { TenantInfo } from '../http/index.js';
import type { Db, TenantTable } from '../store/index.js';
import { freeSlug, slugFrom } from './slug.js';

export function toTenantInfo(row: Omit<TenantTable, 'slug'>): TenantInfo {
  return {
    id: row.id,
    name: row.name,
    tier: (TIERS as readonly string[]).includes(row.tier) ? (row.tier as Tier) : 'free',
    sandbox: row.sandbox === 1,
    sandboxExpiresAt: row.sandbox_expires_at,
  };
}

export interface NewTenant {
  id?: string;
  name: string;
  /** The public company slug; made from the name (and made unique) when absent. */
  slug?: string;
  tier: Tier;
  sandbox: boolean;
  sandboxExpiresAt: string | null;
}

export async function insertTenant(db: Db, t: NewTenant): Promise<TenantInfo> {
  const row: TenantTable = {
    id: t.id ?? randomUUID(),
    name: t.name,
    slug: t.slug ?? (await freeSlug(db, slugFrom(t.name))),
    tier: t.tier,
    sandbox: t.sandbox ? 1 : 0,
    sandbox_expires_at: t.sandboxExpiresAt,
    created_at: new Date().toISOString(),
  };
  await db.insertInto('tenants').values(row).execute();
  return toTenantInfo(row);
}

export async function findTenant(db: Db, id: string): Promise<TenantInfo | undefined> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toTenantInfo(row) : undefined;
}
