import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openTestStore, tenantRow, testDialects } from '@dpp/testkit';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';
import { prepared } from './prepared.js';

const tenantsByIds = prepared((db: Db, ids: readonly string[], name: string | null) =>
  db
    .selectFrom('tenants')
    .select(['id', 'name'])
    .where('id', 'in', ids)
    .$if(name !== null, (q) => q.where('name', '=', name!))
    .orderBy('id'),
);

const insertTenants = prepared((db: Db, rows: readonly ReturnType<typeof tenantRow>[]) =>
  db.insertInto('tenants').values(rows),
);

/** A list sent as one parameter (PostgreSQL's unnest), with a null in it. */
const namesOf = prepared((db: Db, names: readonly (string | null)[]) =>
  isPostgres(db)
    ? sql<{
        n: string | null;
      }>`select n from unnest(${[...names]}::text[]) with ordinality as u(n, i) order by i`.compile(db)
    : sql<{
        n: string | null;
      }>`select value as n from json_each(${JSON.stringify(names)}) order by key`.compile(db),
);

describe.each(testDialects())('prepared statements (%s)', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('builds a shape once and runs it with new values: the same SQL string, the rows Kysely answers', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    await db.executeQuery(insertTenants(db, [tenantRow('a'), tenantRow('b'), tenantRow('c')]));
    const first = tenantsByIds(db, ['a', 'b'], 'Tenant a');
    const second = tenantsByIds(db, ['c', 'b'], 'Tenant b');
    // One compiled text, held once: the statement caches find it without comparing its characters again.
    expect(second.sql).toBe(first.sql);
    expect(second.parameters).not.toEqual(first.parameters);
    expect((await db.executeQuery(first)).rows).toEqual([{ id: 'a', name: 'Tenant a' }]);
    expect((await db.executeQuery(second)).rows).toEqual([{ id: 'b', name: 'Tenant b' }]);
    // In a transaction too: the same statement on the transaction's handle.
    await db.transaction().execute(async (trx) => {
      expect((await trx.executeQuery(tenantsByIds(trx, ['c'], 'Tenant c'))).rows).toEqual([
        { id: 'c', name: 'Tenant c' },
      ]);
    });
  });

  it('builds another statement for another shape: a list of another length, a null where a value was', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    await db.executeQuery(insertTenants(db, [tenantRow('a'), tenantRow('b')]));
    const two = tenantsByIds(db, ['a', 'b'], 'Tenant a');
    const three = tenantsByIds(db, ['a', 'b', 'c'], 'Tenant a');
    const anyName = tenantsByIds(db, ['a', 'b'], null);
    expect(new Set([two.sql, three.sql, anyName.sql]).size).toBe(3);
    expect((await db.executeQuery(anyName)).rows.map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('builds a call with a long list as before, each time: a bulk write is not kept', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    const rows = Array.from({ length: 40 }, (_, i) => tenantRow(`t${String(i).padStart(2, '0')}`));
    await db.executeQuery(insertTenants(db, rows));
    const ids = rows.map((r) => r.id);
    expect((await db.executeQuery(tenantsByIds(db, ids, null))).rows.map((r) => r.id)).toEqual(ids);
    expect((await db.executeQuery(tenantsByIds(db, ids.slice(0, 33), 'Tenant t07'))).rows).toEqual([
      { id: 't07', name: 'Tenant t07' },
    ]);
  });

  it('tells rows of a list apart by their keys: values land in their columns whatever order a row names them in', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    const reordered = (id: string) => {
      const { name, ...rest } = tenantRow(id);
      return { name: `${name}!`, ...rest } as ReturnType<typeof tenantRow>;
    };
    await db.executeQuery(insertTenants(db, [tenantRow('a'), tenantRow('b')]));
    await db.executeQuery(insertTenants(db, [tenantRow('c'), reordered('d')]));
    await db.executeQuery(insertTenants(db, [reordered('e'), tenantRow('f')]));
    const rows = (await db.executeQuery(tenantsByIds(db, ['a', 'b', 'c', 'd', 'e', 'f'], null))).rows;
    expect(rows).toEqual([
      { id: 'a', name: 'Tenant a' },
      { id: 'b', name: 'Tenant b' },
      { id: 'c', name: 'Tenant c' },
      { id: 'd', name: 'Tenant d!' },
      { id: 'e', name: 'Tenant e!' },
      { id: 'f', name: 'Tenant f' },
    ]);
  });

  it('places the values of a list sent as one parameter, its nulls kept', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    if (dialect === 'postgres') {
      expect((await db.executeQuery(namesOf(db, ['x', null, 'y']))).rows).toEqual([
        { n: 'x' },
        { n: null },
        { n: 'y' },
      ]);
      expect((await db.executeQuery(namesOf(db, ['p', null, 'q']))).rows).toEqual([
        { n: 'p' },
        { n: null },
        { n: 'q' },
      ]);
    } else {
      // SQLite has no list parameter: a builder that writes a value into JSON text cannot be prepared.
      expect(() => namesOf(db, ['x', null, 'y'])).toThrow(TypeError);
    }
  });

  it('takes a value the statement leaves out, and refuses one the builder changed', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    await db.executeQuery(insertTenants(db, [tenantRow('a')]));
    // `name` is left out outside a transaction (a clause omitted for that shape): nothing depends on it.
    const leavesOut = prepared((d: Db, id: string, name: string) =>
      d
        .selectFrom('tenants')
        .select('id')
        .where('id', '=', id)
        .$if(d.isTransaction, (q) => q.where('name', '=', name)),
    );
    expect((await db.executeQuery(leavesOut(db, 'a', 'anything'))).rows).toEqual([{ id: 'a' }]);
    const changes = prepared((d: Db, id: string) =>
      d.selectFrom('tenants').select('id').where('id', '=', id.toUpperCase()),
    );
    expect(() => changes(db, 'a')).toThrow(TypeError);
  });

  it('refuses a builder that decides on a value instead of passing it through', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    // Prepared with a sentinel in place of `id`, this builder took its other branch: with verification on (as
    // the test suite runs), the statement is compared with a fresh build and refused.
    const decides = prepared((d: Db, id: string) =>
      id === 'a'
        ? d.selectFrom('tenants').select('id').where('id', '=', id)
        : d.selectFrom('tenants').select('name').where('id', '=', id),
    );
    expect(process.env.DPP_VERIFY_PREPARED).toBe('1');
    expect(() => decides(db, 'b')).not.toThrow();
    expect(() => decides(db, 'a')).toThrow(/differs from its builder's query/);
  });
});
