import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, tenantRow } from '@dpp/testkit';
import type { Db } from './database.js';
import { MAX_NAMED, MAX_NAMED_LENGTH, NAMED_AFTER, StatementNames, statementName } from './pg-statements.js';

describe('which texts are sent as named statements', () => {
  const text = 'select id from tenants where id = $1';

  it('names a query or a write once it was sent NAMED_AFTER times, under its hash', () => {
    const names = new StatementNames();
    for (let i = 1; i < NAMED_AFTER; i++) expect(names.nameFor(text)).toBeUndefined();
    expect(names.nameFor(text)).toBe(statementName(text));
    expect(names.nameFor(text)).toBe(statementName(text));
    expect(statementName(text)).toMatch(/^dpp_[0-9a-f]{32}$/);
    expect(statementName(`${text} `)).not.toBe(statementName(text));
    for (const write of [
      'insert into t values ($1)',
      ' update t set a = 1',
      'delete from t',
      'WITH x as (select 1) select 1',
    ]) {
      for (let i = 1; i < NAMED_AFTER; i++) names.nameFor(write);
      expect(names.nameFor(write), write).toBe(statementName(write));
    }
  });

  it('never names what is not a query or a write', () => {
    const names = new StatementNames(1);
    for (const other of [
      'begin',
      'commit',
      'savepoint sp1',
      'set local statement_timeout = 1',
      'create table t (a int)',
    ]) {
      expect(names.nameFor(other), other).toBeUndefined();
    }
    expect(names.size).toBe(0);
  });

  it('names no more than its bound; the texts named stay named', () => {
    const names = new StatementNames(1, 3);
    const texts = ['select 1', 'select 2', 'select 3', 'select 4'];
    expect(texts.map((t) => names.nameFor(t))).toEqual([...texts.slice(0, 3).map(statementName), undefined]);
    expect(names.nameFor('select 1')).toBe(statementName('select 1'));
    expect(names.size).toBe(3);
    expect(MAX_NAMED).toBeGreaterThanOrEqual(64);
  });

  it('never names a text longer than MAX_NAMED_LENGTH (a bulk write of many rows)', () => {
    const names = new StatementNames(1);
    const rows = Array.from({ length: 2_000 }, (_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ');
    const bulk = `insert into t (a, b) values ${rows}`;
    expect(bulk.length).toBeGreaterThan(MAX_NAMED_LENGTH);
    for (let i = 0; i < 5; i++) expect(names.nameFor(bulk)).toBeUndefined();
    const fits = `select ${'x'.repeat(MAX_NAMED_LENGTH - 7)}`;
    expect(fits.length).toBe(MAX_NAMED_LENGTH);
    expect(names.nameFor(fits)).toBe(statementName(fits));
  });

  it('never names a refused text again', () => {
    const names = new StatementNames(1);
    expect(names.nameFor(text)).toBe(statementName(text));
    names.refuse(text);
    expect(names.nameFor(text)).toBeUndefined();
    expect(names.size).toBe(0);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('named statements on PostgreSQL', () => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  /** One connection, so what it keeps is what the next statement sees. */
  async function store(): Promise<Db> {
    const s = await openTestStore('postgres', { pgPoolSize: 1 });
    drop = s.drop;
    return s.db;
  }

  const prepared = async (db: Db) =>
    (
      await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements`.execute(db)
    ).rows;

  it('sends a repeated query under its name, with the answers it had unnamed', async () => {
    const db = await store();
    await db
      .insertInto('tenants')
      .values([tenantRow('a'), tenantRow('b')])
      .execute();
    const query = (id: string) => db.selectFrom('tenants').select(['id', 'name']).where('id', '=', id);
    const text = query('a').compile().sql;
    expect(await prepared(db)).not.toContainEqual(expect.objectContaining({ statement: text }));
    const answers = [];
    for (const id of ['a', 'b', 'a', 'b', 'none', 'a', 'b']) answers.push(await query(id).execute());
    expect(answers).toEqual([
      ...[[{ id: 'a', name: 'Tenant a' }], [{ id: 'b', name: 'Tenant b' }]],
      ...[[{ id: 'a', name: 'Tenant a' }], [{ id: 'b', name: 'Tenant b' }], []],
      ...[[{ id: 'a', name: 'Tenant a' }], [{ id: 'b', name: 'Tenant b' }]],
    ]);
    expect(await prepared(db)).toContainEqual({ name: statementName(text), statement: text });
  });

  it('sends a kept statement whose columns changed again unnamed outside a transaction; in one, it fails the transaction', async () => {
    const db = await store();
    await sql`create table kept (a int)`.execute(db);
    await sql`insert into kept values (1)`.execute(db);
    const all = () => sql<Record<string, number | null>>`select * from kept`.execute(db);
    for (let i = 0; i < NAMED_AFTER + 2; i++) expect((await all()).rows).toEqual([{ a: 1 }]);
    expect((await prepared(db)).map((p) => p.statement)).toContain('select * from kept');
    // Another replica's migration adds a column: the statement this connection kept answers other columns now.
    await sql`alter table kept add column b int`.execute(db);
    expect((await all()).rows).toEqual([{ a: 1, b: null }]);
    expect((await all()).rows).toEqual([{ a: 1, b: null }]);

    await sql`create table kept2 (a int)`.execute(db);
    const all2 = (on: Db) => sql`select * from kept2`.execute(on);
    for (let i = 0; i < NAMED_AFTER + 2; i++) await all2(db);
    await sql`alter table kept2 add column b int`.execute(db);
    const failed = db.transaction().execute(async (trx) => {
      await sql`insert into kept values (2, 2)`.execute(trx);
      await all2(trx);
    });
    await expect(failed).rejects.toMatchObject({ code: '0A000' });
    // Nothing of the transaction stands, and the text is sent unnamed from then on.
    expect((await all()).rows).toEqual([{ a: 1, b: null }]);
    await db.transaction().execute(async (trx) => {
      expect((await all2(trx)).rows).toEqual([]);
    });
  });
});
