/**
 * Migration 0023: serials keyed by their tenant's number. The rows allocated and registered before it stay as
 * they were, and the database still refuses a second serial of one text in a tenant, whichever kind each is.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { Kysely, type MigrationResultSet, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { raceBeforeAnyMigration } from '../database.js';
import { migrationProvider } from './index.js';

const url = process.env.TEST_DATABASE_URL;

interface Opened {
  db: Kysely<unknown>;
  /** On PostgreSQL, the schema the migrations keep their bookkeeping in (their own, not another suite's). */
  schema?: string;
  close(): Promise<void>;
}

function openSqlite(): Opened {
  const file = new Database(':memory:');
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: file }) });
  return { db, close: () => db.destroy() };
}

async function openPostgres(): Promise<Opened> {
  const schema = `k_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    schema,
    close: async () => {
      await db.destroy();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

const dialects: [string, () => Promise<Opened>][] = [['sqlite', () => Promise.resolve(openSqlite())]];
if (url) dialects.push(['postgres', openPostgres]);

/** A migration run, again when another suite's DDL broke Kysely's read of the catalog first (as the store does). */
async function migrated(run: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  let outcome = await run();
  for (
    let retry = 1;
    outcome.error && raceBeforeAnyMigration(outcome.error, outcome.results) && retry <= 10;
    retry++
  ) {
    await new Promise((r) => setTimeout(r, 50 * retry));
    outcome = await run();
  }
  return outcome;
}

const COLUMNS = ['tenant_id', 'serial', 'seq', 'product_id', 'gtin', 'batch_id', 'allocated_at'] as const;

/** A serial row with what it needs (no foreign keys: the serials point at nothing the database checks). */
function insertSerial(db: Kysely<unknown>, tenant: string, serial: string, seq: number) {
  const values = [tenant, serial, seq, 'p1', '09506000134352', 'b1', '2026-11-28T00:00:00.000Z'];
  return sql`insert into carrier_serials (${sql.join(COLUMNS.map((c) => sql.ref(c)))})
    values (${sql.join(values)})`.execute(db);
}

describe.each(dialects)('migration 0023_serials_keyed_by_number (%s)', (_, open) => {
  const opened: Opened[] = [];
  afterAll(async () => {
    for (const o of opened) await o.close();
  });

  it('keeps every serial, and refuses a second serial of one text in a tenant, whichever kind each is', async () => {
    const o = await open();
    opened.push(o);
    const { db } = o;
    const migrator = new Migrator({
      db,
      provider: migrationProvider,
      ...(o.schema ? { migrationTableSchema: o.schema } : {}),
    });
    expect((await migrated(() => migrator.migrateTo('0022_resolver_serial_index'))).error).toBeUndefined();
    // Two the counter allocated (their text is their number) and two registered ones.
    await insertSerial(db, 't1', '7', 7);
    await insertSerial(db, 't1', '8', 8);
    await insertSerial(db, 't1', 'A-1', 9);
    await sql`update carrier_serials set print_status = 'printed' where serial = '8'`.execute(db);
    await insertSerial(db, 't1', '0042', 10);
    expect((await migrated(() => migrator.migrateToLatest())).error).toBeUndefined();

    const rows = await sql<{ serial: string; seq: number | string; print_status: string | null }>`
      select serial, seq, print_status from carrier_serials order by seq`.execute(db);
    expect(rows.rows.map((r) => [r.serial, Number(r.seq), r.print_status])).toEqual([
      ['7', 7, null],
      ['8', 8, 'printed'],
      ['A-1', 9, null],
      ['0042', 10, null],
    ]);

    const refused = async (serial: string, seq: number, tenant = 't1') =>
      insertSerial(db, tenant, serial, seq).then(
        () => 'inserted',
        (err: Error) => err.message,
      );
    // The counter's number again; a registered text again; a text of the counter's form that is not its number.
    expect(await refused('7', 7)).toMatch(/unique|duplicate/i);
    expect(await refused('A-1', 11)).toMatch(/unique|duplicate/i);
    expect(await refused('12', 13)).toMatch(/check|carrier_serials_form/i);
    // What another tenant has is no conflict, and a new serial of either kind goes in.
    expect(await refused('A-1', 9, 't2')).toBe('inserted');
    expect(await refused('11', 11)).toBe('inserted');
    expect(await refused('B-2', 12)).toBe('inserted');
  });
});
