import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, tenantRow, testDialects } from '@dpp/testkit';
import type { Db } from './database.js';
import { WriteSet, WriteSetMismatch, shiftParameters } from './write-set.js';

const audit = (tenantId: string, n: number) => ({
  id: `audit-${tenantId}-${n}`,
  tenant_id: tenantId,
  actor_type: 'system',
  actor_id: 'test',
  action: `action.${n}`,
  resource_type: null,
  resource_id: null,
  correlation_id: null,
  details: null,
  occurred_at: '2026-01-01T00:00:00.000Z',
});

const epcisEvent = (tenantId: string, id: string) => ({
  id,
  tenant_id: tenantId,
  event_id: `urn:uuid:${id}`,
  event_type: 'ObjectEvent',
  event_time: '2026-01-01T00:00:00.000Z',
  record_time: '2026-01-01T00:00:00.000Z',
  action: 'ADD',
  biz_step: null,
  disposition: null,
  source: 'capture',
  capture_id: null,
  context: null,
  document: '{}',
});

const names = async (db: Db) =>
  (await db.selectFrom('tenants').select(['id', 'name']).orderBy('id').execute()).map(
    (t) => `${t.id}=${t.name}`,
  );

describe.each(testDialects())('a write set (%s)', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  /** A fresh store of this dialect holding these tenants, dropped after the test. */
  async function storeWith(...tenants: string[]): Promise<Db> {
    const store = await openTestStore(dialect);
    drop = store.drop;
    if (tenants.length > 0) {
      await store.db
        .insertInto('tenants')
        .values(tenants.map((t) => tenantRow(t)))
        .execute();
    }
    return store.db;
  }

  it('runs INSERTs, UPDATEs and DELETEs of different rows together, each with its own parameters', async () => {
    const db = await storeWith('a', 'b', 'c');
    await db.transaction().execute(async (trx) => {
      const writes = new WriteSet()
        .add(trx.insertInto('tenants').values([tenantRow('d'), tenantRow('e')]), {
          rows: 2,
          otherwise: 'no twin',
        })
        .add(trx.updateTable('tenants').set({ name: 'Renamed' }).where('id', 'in', ['a', 'b']), {
          rows: 2,
          otherwise: 'a and b are there',
        })
        .add(trx.deleteFrom('tenants').where('id', '=', 'c'))
        .add(trx.insertInto('tenants').values(tenantRow('f')))
        .add(trx.insertInto('audit_log').values([audit('f', 1), audit('f', 2)]))
        // A row and a row with a foreign key to it, in one set.
        .add(trx.insertInto('epcis_events').values(epcisEvent('f', 'ev-1')))
        .add(
          trx
            .insertInto('epcis_event_epcs')
            .values({ tenant_id: 'f', epc: 'urn:epc:id:sgtin:1.2.3', event_row_id: 'ev-1' }),
        );
      expect(writes.size).toBe(7);
      await writes.flush(trx);
      expect(writes.size).toBe(0);
    });
    expect(await names(db)).toEqual(['a=Renamed', 'b=Renamed', 'd=Tenant d', 'e=Tenant e', 'f=Tenant f']);
    const actions = await db.selectFrom('audit_log').select('action').where('tenant_id', '=', 'f').execute();
    expect(actions.map((a) => a.action).sort()).toEqual(['action.1', 'action.2']);
    const epcs = await db
      .selectFrom('epcis_event_epcs')
      .select('event_row_id')
      .where('tenant_id', '=', 'f')
      .execute();
    expect(epcs).toEqual([{ event_row_id: 'ev-1' }]);
  });

  it('throws when a write changes another number of rows than it expects, and the failed transaction takes the set back', async () => {
    const db = await storeWith('a', 'b');
    const failed = db.transaction().execute(async (trx) => {
      const writes = new WriteSet()
        .add(trx.insertInto('tenants').values(tenantRow('x')))
        // b is there already: the insert that must insert one row inserts none.
        .add(
          trx
            .insertInto('tenants')
            .values([tenantRow('b', { name: 'Twin' })])
            .onConflict((oc) => oc.column('id').doNothing()),
          { rows: 1, otherwise: 'a twin came first' },
        )
        .add(trx.updateTable('tenants').set({ name: 'Moved' }).where('id', '=', 'a'));
      await writes.flush(trx);
    });
    await expect(failed).rejects.toThrow(WriteSetMismatch);
    await expect(failed).rejects.toThrow(/a twin came first \(expected 1 rows changed, 0 were\)/);
    expect(await names(db)).toEqual(['a=Tenant a', 'b=Tenant b']);
  });

  it('sends a set whose parameters exceed one statement in several', async () => {
    const db = await storeWith('t');
    // 10 columns a row: 40 INSERTs of 100 rows are 40,000 parameters, past one statement's share.
    await db.transaction().execute(async (trx) => {
      const writes = new WriteSet();
      for (let i = 0; i < 40; i++) {
        const rows = Array.from({ length: 100 }, (_, n) => audit('t', i * 100 + n));
        writes.add(trx.insertInto('audit_log').values(rows), { rows: 100, otherwise: 'all inserted' });
      }
      await writes.flush(trx);
    });
    const { count } = await db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenant_id', '=', 't')
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(4000);
  });

  it('stands alone: every write of a set or none, with no transaction of the caller', async () => {
    const db = await storeWith('a', 'b');
    const set = (twin: string) =>
      new WriteSet()
        .add(db.insertInto('audit_log').values([audit('a', 1), audit('a', 2)]), {
          rows: 2,
          otherwise: 'both audit rows are new',
        })
        .add(db.updateTable('tenants').set({ name: 'Moved' }).where('id', '=', 'a'))
        // Raw SQL, with parameters of its own after the others'.
        .addRaw(sql`update tenants set name = ${'Raw'} where id = ${'b'}`.compile(db), {
          rows: 1,
          otherwise: 'b is there',
        })
        .add(
          db
            .insertInto('tenants')
            .values(tenantRow(twin))
            .onConflict((oc) => oc.column('id').doNothing()),
          { rows: 1, otherwise: 'no twin came first' },
        );
    // b is there: the last write changes nothing, so none of the set stands, though the others ran.
    const failed = set('b').flushAlone(db);
    await expect(failed).rejects.toThrow(WriteSetMismatch);
    await expect(failed).rejects.toThrow(/no twin came first \(expected 1 rows changed, 0 were\)/);
    expect(await names(db)).toEqual(['a=Tenant a', 'b=Tenant b']);
    expect(await db.selectFrom('audit_log').select('id').where('tenant_id', '=', 'a').execute()).toEqual([]);
    // c is new: all of it stands.
    await set('c').flushAlone(db);
    expect(await names(db)).toEqual(['a=Moved', 'b=Raw', 'c=Tenant c']);
    const actions = await db.selectFrom('audit_log').select('action').where('tenant_id', '=', 'a').execute();
    expect(actions.map((a) => a.action).sort()).toEqual(['action.1', 'action.2']);
  });

  it('stands alone across several statements in a transaction of its own: all of them or none', async () => {
    const db = await storeWith('t');
    // 40,000 parameters and then a twin: the set needs two statements, and its last write finds a row taken.
    const set = (last: string) => {
      const writes = new WriteSet();
      for (let i = 0; i < 40; i++) {
        const rows = Array.from({ length: 100 }, (_, n) => audit('t', i * 100 + n));
        writes.add(db.insertInto('audit_log').values(rows), { rows: 100, otherwise: 'all inserted' });
      }
      return writes.add(
        db
          .insertInto('tenants')
          .values(tenantRow(last))
          .onConflict((oc) => oc.column('id').doNothing()),
        { rows: 1, otherwise: 'no twin came first' },
      );
    };
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('audit_log')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('tenant_id', '=', 't')
            .executeTakeFirstOrThrow()
        ).count,
      );
    await expect(set('t').flushAlone(db)).rejects.toThrow(WriteSetMismatch);
    expect(await count()).toBe(0);
    await set('u').flushAlone(db);
    expect(await count()).toBe(4000);
  });

  it('stands alone though a write that fails is not the one that expects', async () => {
    const db = await storeWith('a');
    // A duplicate primary key fails the statement (or, on SQLite, the set's own transaction) whole.
    const failed = new WriteSet()
      .add(db.updateTable('tenants').set({ name: 'Moved' }).where('id', '=', 'a'))
      .add(db.insertInto('tenants').values(tenantRow('a')))
      .flushAlone(db);
    await expect(failed).rejects.toThrow();
    await expect(failed).rejects.not.toThrow(WriteSetMismatch);
    expect(await names(db)).toEqual(['a=Tenant a']);
  });

  it('takes only INSERT, UPDATE and DELETE', async () => {
    const db = await storeWith();
    expect(() => new WriteSet().add(db.selectFrom('tenants').selectAll())).toThrow(TypeError);
    expect(() => new WriteSet().addRaw(sql`select 1`.compile(db))).toThrow(TypeError);
  });
});

describe('shiftParameters', () => {
  it('moves every $n past the offset and leaves the rest of the text as it was', () => {
    expect(shiftParameters('insert into t (a, b) values ($1, $2), ($3, $10)', 7)).toBe(
      'insert into t (a, b) values ($8, $9), ($10, $17)',
    );
    expect(shiftParameters('select $1 || $12x', 100)).toBe('select $101 || $112x');
    expect(shiftParameters('select $9', 1)).toBe('select $10');
    // A `$` not followed by digits is not a parameter; nor is text without any.
    expect(shiftParameters('select $ , $$, a$b, $3', 2)).toBe('select $ , $$, a$b, $5');
    expect(shiftParameters('select 1', 5)).toBe('select 1');
    expect(shiftParameters('select $1', 0)).toBe('select $1');
  });
});
