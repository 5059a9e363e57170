import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, tenantRow, testDialects } from '@dpp/testkit';
import { readTogether } from './read-set.js';

describe.each(testDialects())('reads sent together (%s)', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('answers each read the rows it answers alone, its parameters its own', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    await db
      .insertInto('tenants')
      .values([
        tenantRow('a'),
        tenantRow('b', { sandbox: 1, sandbox_expires_at: '2026-02-01T00:00:00.000Z' }),
        tenantRow('c'),
      ])
      .execute();
    const reads = {
      some: db.selectFrom('tenants').selectAll().where('id', 'in', ['a', 'b']).compile(),
      one: db.selectFrom('tenants').select(['id', 'sandbox']).where('id', '=', 'c').compile(),
      none: db.selectFrom('tenants').select('id').where('id', '=', 'z').compile(),
      raw: sql<{ id: string }>`select id from tenants where slug = ${'tenant-b'}`.compile(db),
    };
    const read = await readTogether(db, reads);
    const byId = (rows: { id: string }[]) => [...rows].sort((x, y) => x.id.localeCompare(y.id));
    // Text, integers and nulls come back as the driver gives them, row for row.
    expect(byId(read.some)).toEqual(byId((await db.executeQuery(reads.some)).rows));
    expect(read.some.find((t) => t.id === 'b')).toMatchObject({
      sandbox: 1,
      sandbox_expires_at: '2026-02-01T00:00:00.000Z',
    });
    expect(read.one).toEqual([{ id: 'c', sandbox: 0 }]);
    expect(read.none).toEqual([]);
    expect(read.raw).toEqual([{ id: 'b' }]);
  });

  it('refuses a write and a read named unlike a column', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    const write = db.deleteFrom('tenants').where('id', '=', 'a').compile();
    await expect(readTogether(db, { write })).rejects.toThrow(/SELECT/);
    const read = db.selectFrom('tenants').select('id').compile();
    await expect(readTogether(db, { 'x"; drop table tenants; --': read })).rejects.toThrow(/named/);
  });
});
