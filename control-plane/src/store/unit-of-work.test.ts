import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore } from '@dpp/testkit';
import { GuardedKysely, UnitOfWorkViolation, inUnitOfWork } from './unit-of-work.js';
import { testDialects } from '@dpp/testkit';

describe.each(testDialects())('a unit of work on %s', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('refuses the root handle inside the transaction at once, instead of waiting for its connection', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    const outcome = await db
      .transaction()
      .execute(async (trx) => {
        await trx.selectFrom('tenants').select('id').execute();
        expect(inUnitOfWork()).toBe(true);
        await db.selectFrom('tenants').select('id').execute(); // the mistake
        return 'finished';
      })
      .catch((err: unknown) => err);
    expect(outcome).toBeInstanceOf(UnitOfWorkViolation);
    // The transaction rolled back and the root handle works again outside it.
    expect(inUnitOfWork()).toBe(false);
    await expect(db.selectFrom('tenants').select('id').execute()).resolves.toEqual([]);
  });

  it('refuses a second transaction begun on the root handle inside a unit', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    const outcome = await db
      .transaction()
      .execute(() => db.transaction().execute(async () => 'nested'))
      .catch((err: unknown) => err);
    expect(outcome).toBeInstanceOf(UnitOfWorkViolation);
  });

  it('lets concurrent requests wait their turn, and work left running after the unit use the root handle', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const { db } = store;
    let later: Promise<unknown> = Promise.resolve();
    const [a, b] = await Promise.all([
      db.transaction().execute(async (trx) => {
        later = new Promise((r) => setTimeout(r, 20)).then(() =>
          db.selectFrom('tenants').select('id').execute(),
        );
        await new Promise((r) => setTimeout(r, 5));
        return trx.selectFrom('tenants').select('id').execute();
      }),
      db.selectFrom('tenants').select('id').execute(),
    ]);
    expect(a).toEqual([]);
    expect(b).toEqual([]);
    await expect(later).resolves.toEqual([]);
  });
});

describe('exclusive work beside the one connection', () => {
  it('runs while no query does: queries asked for during it wait for it, and it goes before those already waiting', async () => {
    const store = await openTestStore('sqlite');
    try {
      const db = store.db;
      if (!(db instanceof GuardedKysely)) throw new Error('the store is not guarded');
      const order: string[] = [];
      /** A query that notes when it is answered. */
      const query = (note: string) =>
        store.db
          .selectFrom('tenants')
          .select('id')
          .execute()
          .then(() => order.push(note));
      let release = () => {};
      const holding = new Promise<void>((resolve) => (release = resolve));
      // A transaction holds the connection; a query and the exclusive work wait, the query first.
      const unit = db.transaction().execute(async () => {
        await holding;
        order.push('unit');
      });
      const waiting = query('query');
      const exclusive = db.exclusive(async () => {
        order.push('exclusive begins');
        const during = query('query asked during it');
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push('exclusive ends');
        return { during };
      });
      release();
      await Promise.all([unit, waiting]);
      await (
        await exclusive
      ).during;
      expect(order).toEqual(['unit', 'exclusive begins', 'exclusive ends', 'query', 'query asked during it']);
    } finally {
      await store.drop();
    }
  });
});
