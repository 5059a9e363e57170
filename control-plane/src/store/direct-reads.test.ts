import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, tenantRow, testDialects } from '@dpp/testkit';
import type { Db } from './database.js';
import { directReads } from './direct-reads.js';
import { UnitOfWorkViolation } from './unit-of-work.js';

const namesOf = (db: Db, id: string) =>
  db.selectFrom('tenants').select(['id', 'name']).where('id', '=', id).compile();

describe.each(testDialects())('reads straight on the driver (%s)', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it("answers the rows Kysely answers for the same statement, and is the root handle's alone", async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    await db.insertInto('tenants').values(tenantRow('a')).execute();
    const query = namesOf(db, 'a');
    const reads = directReads(db)!;
    const rows = await reads.all(query.sql, query.parameters);
    expect(rows).toEqual([{ id: 'a', name: 'Tenant a' }]);
    expect(rows).toEqual((await db.executeQuery(query)).rows);
    // Twice: the statement prepared the first time is run again.
    expect(await reads.all(query.sql, ['none'])).toEqual([]);
    await db.transaction().execute(async (trx) => {
      expect(directReads(trx)).toBeUndefined();
      await expect(reads.all(query.sql, query.parameters)).rejects.toBeInstanceOf(UnitOfWorkViolation);
    });
  });

  it.runIf(dialect === 'sqlite')(
    "waits for a transaction on the one connection and never reads the transaction's uncommitted rows",
    async () => {
      const store = await openTestStore(dialect);
      drop = store.drop;
      const { db } = store;
      const query = namesOf(db, 'b');
      let commit!: () => void;
      const committing = new Promise<void>((r) => (commit = r));
      let inserted!: () => void;
      const insertedRow = new Promise<void>((r) => (inserted = r));
      const transaction = db.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(tenantRow('b')).execute();
        inserted();
        await committing;
      });
      await insertedRow;
      let rows: unknown[] | undefined;
      const read = directReads(db)!
        .all(query.sql, query.parameters)
        .then((r) => (rows = r));
      // However long the transaction stays open, the read waits for it.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(rows).toBeUndefined();
      commit();
      await transaction;
      await read;
      expect(rows).toEqual([{ id: 'b', name: 'Tenant b' }]);
    },
  );
});
