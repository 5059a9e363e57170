/** Migration 0012 gives the workspaces that exist a unique public company slug made from their names. */
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrationProvider } from './index.js';

describe('migration 0012_tenant_slug', () => {
  it('backfills unique slugs in creation order, then holds them unique', async () => {
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    try {
      const migrator = new Migrator({ db, provider: migrationProvider });
      expect((await migrator.migrateTo('0011_market_status')).error).toBeUndefined();
      const names = ['Acme Labels', 'Acme Labels', 'API', 'Ö', 'Acme-Labels'];
      for (const [i, name] of names.entries()) {
        await sql`insert into tenants (id, name, tier, sandbox, sandbox_expires_at, created_at)
          values (${`t${i}`}, ${name}, 'free', 0, null, ${`2026-01-0${i + 1}T00:00:00Z`})`.execute(db);
      }
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const { rows } = await sql<{
        id: string;
        slug: string;
      }>`select id, slug from tenants order by id`.execute(db);
      expect(rows.map((r) => r.slug)).toEqual([
        'acme-labels',
        'acme-labels-2',
        'api-ws',
        'o-ws',
        'acme-labels-3',
      ]);
      await expect(sql`update tenants set slug = 'api-ws' where id = 't0'`.execute(db)).rejects.toThrow(
        /UNIQUE/,
      );
    } finally {
      await db.destroy();
    }
  });
});
