import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Store } from '@dpp/control-plane';
import type { DialectName } from './harness.js';

/** A fresh, migrated store on the given dialect (its own PostgreSQL schema, dropped by `drop`). */
export async function openTestStore(
  dialect: DialectName,
  opts: { pgPoolSize?: number } = {},
): Promise<Store & { drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const store = await openStore({ sqliteFile: ':memory:' });
    return { ...store, drop: () => store.close() };
  }
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `s_${randomBytes(6).toString('hex')}`;
  const store = await openStore({ databaseUrl: url, pgSchema: schema, ...opts });
  return {
    ...store,
    drop: async () => {
      await store.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

/** A tenants row for store tests that insert one directly: `fields` overrides the defaults. */
export function tenantRow(
  id: string,
  fields: Partial<{ name: string; tier: string; sandbox: number; sandbox_expires_at: string | null }> = {},
) {
  return {
    id,
    name: `Tenant ${id}`,
    slug: `tenant-${id}`,
    tier: 'free',
    sandbox: 0,
    sandbox_expires_at: null as string | null,
    created_at: '2026-01-01T00:00:00.000Z',
    ...fields,
  };
}
