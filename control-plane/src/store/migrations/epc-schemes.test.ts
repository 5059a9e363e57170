/** Migration 0021: what existed before keeps SGTIN-96; products choose auto; jobs keep their EPC as epc_hex. */
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrationProvider } from './index.js';

/** Inserts a row with every NOT NULL column without a default filled in (text 'x', numbers 1), then `values`. */
async function insertRow(db: Kysely<unknown>, table: string, values: Record<string, string | number>) {
  const { rows } = await sql<{
    name: string;
    type: string;
    notnull: number;
    dflt_value: unknown;
  }>`select name, type, "notnull", dflt_value from pragma_table_info(${table})`.execute(db);
  const row: Record<string, string | number> = {};
  for (const c of rows) {
    if (c.notnull && c.dflt_value === null) row[c.name] = /int/i.test(c.type) ? 1 : 'x';
  }
  Object.assign(row, values);
  const columns = Object.keys(row);
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
    values (${sql.join(columns.map((c) => row[c]))})`.execute(db);
}

describe('migration 0021_epc_schemes', () => {
  it('keeps earlier serials and jobs SGTIN-96, copies each job EPC into epc_hex, and defaults products to auto', async () => {
    const file = new Database(':memory:');
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: file }) });
    try {
      const migrator = new Migrator({ db, provider: migrationProvider });
      expect((await migrator.migrateTo('0020_print_loop_indexes')).error).toBeUndefined();
      // Rows of other tables (tenants, devices) do not matter to this migration.
      file.pragma('foreign_keys = OFF');
      await insertRow(db, 'products', { id: 'p1', tenant_id: 't1' });
      await insertRow(db, 'carrier_serials', { tenant_id: 't1', serial: '7', seq: 7, product_id: 'p1' });
      const epc = '30343A0520B2C30000000007';
      await insertRow(db, 'print_jobs', { job_ref: 'job_1', tenant_id: 't1', serial: '7', sgtin96_epc: epc });
      expect((await migrator.migrateToLatest()).error).toBeUndefined();

      const product = await sql<{ epc_scheme: string }>`select epc_scheme from products`.execute(db);
      expect(product.rows).toEqual([{ epc_scheme: 'auto' }]);
      const serial = await sql<{ epc_scheme: string }>`select epc_scheme from carrier_serials`.execute(db);
      expect(serial.rows).toEqual([{ epc_scheme: 'sgtin-96' }]);
      const job = await sql`select epc_scheme, epc_hex, requires_nfc from print_jobs`.execute(db);
      expect(job.rows).toEqual([{ epc_scheme: 'sgtin-96', epc_hex: epc, requires_nfc: 0 }]);
    } finally {
      await db.destroy();
    }
  });
});
