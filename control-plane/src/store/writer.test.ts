import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, testDialects } from '@dpp/testkit';
import { openStore, type Store } from './database.js';
import { FifoLock, firstInLine } from './unit-of-work.js';

describe('the SQLite writer', () => {
  let store: Store | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    store = undefined;
  });

  it('hands the connection out first come, first served', async () => {
    const lock = new FifoLock(Infinity);
    const order: number[] = [];
    await lock.acquire();
    const waiting = [1, 2, 3].map((n) => lock.acquire().then(() => order.push(n)));
    expect(lock.waiting).toBe(3);
    for (let i = 0; i < 3; i++) {
      lock.release();
      await Promise.resolve();
    }
    lock.release();
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
    expect(lock.waiting).toBe(0);
  });

  it('serves the first lane before the rest, but hands every fourth turn to the rest so it never starves', async () => {
    const lock = new FifoLock(Infinity);
    const order: string[] = [];
    await lock.acquire();
    const waiting = [
      ...['r1', 'r2'].map((n) => lock.acquire(false).then(() => order.push(n))),
      ...['f1', 'f2', 'f3', 'f4', 'f5'].map((n) => lock.acquire(true).then(() => order.push(n))),
    ];
    for (let i = 0; i < 8; i++) {
      lock.release();
      await Promise.resolve();
      await Promise.resolve();
    }
    await Promise.all(waiting);
    expect(order).toEqual(['f1', 'f2', 'f3', 'r1', 'f4', 'f5', 'r2']);
  });

  it('hands over in a later turn of the event loop once hand-overs ran turnMs without one, a claim that came meanwhile first', async () => {
    let t = 0;
    const lock = new FifoLock(5, () => t);
    const started: string[] = [];
    await lock.acquire();
    const a = lock.acquire().then(() => started.push('a'));
    const b = lock.acquire().then(() => started.push('b'));
    lock.release(); // the run began at 0: handed over at once
    await Promise.resolve();
    expect(started).toEqual(['a']);
    t = 6;
    lock.release(); // the run has lasted 6 ms: the next holder waits for a turn
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(started).toEqual(['a']);
    const c = lock.acquire(true).then(() => started.push('c')); // read in that turn
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'c']);
    lock.release(); // a new run began with the turn
    await Promise.all([a, b, c]);
    expect(started).toEqual(['a', 'c', 'b']);
  });

  it('serves concurrent queries and transactions in order, all of them', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-writer-'));
    store = await openStore({ sqliteFile: path.join(dir, 'dpp.sqlite') });
    const db = store.db;
    await sql`create table t (n integer)`.execute(db);
    await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        n % 2
          ? db.transaction().execute((trx) => sql`insert into t values (${n})`.execute(trx))
          : sql`insert into t values (${n})`.execute(db),
      ),
    );
    const { rows } = await sql<{ c: number }>`select count(*) as c from t`.execute(db);
    expect(rows[0]!.c).toBe(50);
  });

  it('checkpoints the WAL beside the writer: the database file takes the rows without the writer doing it', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-writer-'));
    const file = path.join(dir, 'dpp.sqlite');
    store = await openStore({ sqliteFile: file });
    const db = store.db;
    await sql`create table blob_rows (b text)`.execute(db);
    const before = statSync(file).size;
    // Well under the writer's own automatic checkpoint (SAFETY_NET_PAGES): only the worker moves these.
    for (let i = 0; i < 20; i++) await sql`insert into blob_rows values (${'x'.repeat(8000)})`.execute(db);
    const deadline = Date.now() + 20_000;
    while (statSync(file).size <= before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(statSync(file).size).toBeGreaterThan(before);
  });
});

describe('the lanes of a pool of connections', () => {
  it('lets as many hold it as it has connections, and gives a freed one to the first lane first', async () => {
    const lock = new FifoLock(Infinity, undefined, 2);
    const order: string[] = [];
    await lock.acquire();
    await lock.acquire();
    expect(lock.tryAcquire()).toBe(false);
    const waiting = [
      lock.acquire(false).then(() => order.push('rest')),
      lock.acquire(true).then(() => order.push('first')),
    ];
    lock.release();
    await Promise.resolve();
    expect(order).toEqual(['first']);
    lock.release();
    await Promise.all(waiting);
    expect(order).toEqual(['first', 'rest']);
    lock.release();
    lock.release();
    expect(lock.tryAcquire()).toBe(true);
  });

  it.runIf(testDialects().includes('postgres'))(
    'on PostgreSQL, serves a first-in-line query before the others that wait for the pool',
    async () => {
      const pool = await openTestStore('postgres', { pgPoolSize: 2 });
      try {
        const { db } = pool;
        // Two transactions hold both connections until they are let go.
        const letGo: (() => void)[] = [];
        let holding = 0;
        const held = [0, 1].map(() =>
          db.transaction().execute(async (trx) => {
            await sql`select 1`.execute(trx);
            holding += 1;
            await new Promise<void>((resolve) => letGo.push(resolve));
          }),
        );
        while (holding < 2) await new Promise((resolve) => setTimeout(resolve, 5));
        const order: string[] = [];
        const rest = sql`select 1`.execute(db).then(() => order.push('rest'));
        const first = firstInLine(() => sql`select 1`.execute(db)).then(() => order.push('first'));
        letGo[0]!();
        await Promise.race([rest, first]);
        letGo[1]!();
        await Promise.all([rest, first, ...held]);
        // Asked for first, the other query would have had the connection (the pool's own queue is FIFO).
        expect(order).toEqual(['first', 'rest']);
      } finally {
        await pool.drop();
      }
    },
  );
});
