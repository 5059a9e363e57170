import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStore } from './database.js';

const url = process.env.TEST_DATABASE_URL;

describe.skipIf(!url)('migrations on PostgreSQL beside other users of the database', () => {
  it('migrate a new schema while other schemas of the database are being dropped', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const others = Array.from({ length: 60 }, () => `x_${randomBytes(6).toString('hex')}`);
    const mine = Array.from({ length: 6 }, () => `m_${randomBytes(6).toString('hex')}`);
    try {
      for (const s of others) await admin.query(`create schema ${s}; create table ${s}.t (id int)`);
      // Another suite's teardown dropping its schemas, while these stores migrate theirs.
      const dropping = (async () => {
        for (const s of others) await admin.query(`drop schema ${s} cascade`);
      })();
      const opened = await Promise.allSettled(
        mine.map((s) => openStore({ databaseUrl: url!, pgSchema: s, pgPoolSize: 2 })),
      );
      await dropping;
      for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(
        mine.map(() => 'ok'),
      );
    } finally {
      for (const s of [...others, ...mine]) await admin.query(`drop schema if exists ${s} cascade`);
      await admin.end();
    }
  });
});

describe.skipIf(!url)('migrations on PostgreSQL in the schema DATABASE_URL names', () => {
  it('keep their bookkeeping in that schema, whatever other schemas of the database hold', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const other = `o_${randomBytes(6).toString('hex')}`;
    const mine = `n_${randomBytes(6).toString('hex')}`;
    try {
      // Another deployment in the same database, already migrated: its Kysely tables are in its schema.
      await admin.query(`create schema ${other}; create schema ${mine}`);
      const first = await openStore({ databaseUrl: url!, pgSchema: other, pgPoolSize: 2 });
      await first.close();
      // This one reaches its schema through search_path in the URL (as `npm start` and operators do).
      const viaUrl = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${mine}`)}`;
      const store = await openStore({ databaseUrl: viaUrl, pgPoolSize: 2 });
      await store.close();
      const { rows } = await admin.query<{ table_name: string }>(
        `select table_name from information_schema.tables where table_schema = $1 and table_name like 'kysely%'`,
        [mine],
      );
      expect(rows.map((r) => r.table_name).sort()).toEqual(['kysely_migration', 'kysely_migration_lock']);
    } finally {
      for (const s of [other, mine]) await admin.query(`drop schema if exists ${s} cascade`);
      await admin.end();
    }
  });
});
