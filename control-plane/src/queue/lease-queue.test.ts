import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { Kysely, type KyselyPlugin, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, testDialects } from '@dpp/testkit';
import type { Db, Store } from '../store/index.js';
import {
  LeaseLost,
  claim,
  claimChosen,
  claimInTurnsQuery,
  chooseDue,
  expiredLeases,
  fail,
  finish,
  type LeaseColumns,
  release,
  renew,
  retryDelay,
} from './index.js';

/*
 * The queue runs on a table of its own here, shaped like every queue table (state, lease owner, locked
 * until, attempts, order). The module is typed by the store's tables; this one stands in for them.
 */
const PROBE = {
  table: 'queue_probe',
  id: 'id',
  owner: 'lease_owner',
  lockedUntil: 'locked_until',
  attempts: 'attempts',
  order: 'created_at',
} as unknown as LeaseColumns<'ingest_jobs'>;

// Due: waiting, or running under a lease that ran out (its worker died), as in every queue here.
const waiting = { due: (eb: any) => eb('status', 'in', ['waiting', 'running']) }; // eslint-disable-line @typescript-eslint/no-explicit-any
const T0 = Date.parse('2026-11-01T00:00:00Z');

describe('retryDelay', () => {
  it('steps through the schedule and repeats its last step', () => {
    expect([1, 2, 3, 4, 9].map((n) => retryDelay([10, 20, 30], n))).toEqual([10, 20, 30, 30, 30]);
    expect(retryDelay([10], 0)).toBe(10);
    expect(() => retryDelay([], 1)).toThrow(RangeError);
  });
});

describe.each(testDialects())('the lease queue (%s)', (dialect) => {
  let store: Store & { drop(): Promise<void> };
  let db: Db;

  beforeAll(async () => {
    store = await openTestStore(dialect);
    db = store.db;
    await sql`create table queue_probe (id text primary key, status text not null, lease_owner text,
      locked_until text, attempts integer not null default 0, created_at text not null, note text)`.execute(
      db,
    );
  });
  afterAll(() => store?.drop());
  beforeEach(async () => {
    await sql`delete from queue_probe`.execute(db);
  });

  const add = async (n: number) => {
    const ids = Array.from({ length: n }, (_, i) => `job-${String(i).padStart(4, '0')}`);
    for (const [i, id] of ids.entries()) {
      await sql`insert into queue_probe (id, status, created_at) values (${id}, 'waiting', ${new Date(T0 + i).toISOString()})`.execute(
        db,
      );
    }
    return ids;
  };
  const row = async (id: string) =>
    (await sql<Record<string, unknown>>`select * from queue_probe where id = ${id}`.execute(db)).rows[0]!;
  const take = (owner: string, now = T0, limit = 1) =>
    claim(db, PROBE, { ...waiting, now, leaseMs: 1_000, owner, limit, set: () => ({ status: 'running' }) });

  it('claims the oldest due rows, counts the attempt and leases them to the owner', async () => {
    const [a, b] = await add(3);
    const got = await take('w1', T0, 2);
    expect(got.map((r) => r.id)).toEqual([a, b]);
    expect(await row(a!)).toMatchObject({
      status: 'running',
      lease_owner: 'w1',
      attempts: 1,
      locked_until: new Date(T0 + 1_000).toISOString(),
    });
    // Leased rows are not due to anyone else until the lease runs out.
    expect((await take('w2', T0 + 999, 5)).map((r) => r.id)).toEqual(['job-0002']);
    expect(await take('w3', T0 + 999)).toEqual([]);
  });

  it('with peek, finds nothing without taking a write', async () => {
    expect(await claim(db, PROBE, { ...waiting, now: T0, leaseMs: 1_000, owner: 'w1', peek: true })).toEqual(
      [],
    );
    await add(1);
    expect(
      await claim(db, PROBE, { ...waiting, now: T0, leaseMs: 1_000, owner: 'w1', peek: true }),
    ).toHaveLength(1);
  });

  it('gives each row to exactly one of many claimers at once', async () => {
    const ids = await add(40);
    const owners = Array.from({ length: 12 }, () => randomUUID());
    const claimed: string[] = [];
    // Rounds of concurrent claims until the queue is empty: no row twice, none left behind.
    for (let round = 0; round < 20 && claimed.length < ids.length; round++) {
      const got = await Promise.all(owners.map((o) => take(o, T0, 3)));
      claimed.push(...got.flat().map((r) => r.id as string));
    }
    expect(claimed.sort()).toEqual(ids);
  });

  it('chooses due rows and claims them each for its own owner; concurrent choosers in transactions share none', async () => {
    const ids = await add(30);
    const claimed: string[] = [];
    const chooseAndClaim = () =>
      db.transaction().execute(async (trx) => {
        const chosen = await chooseDue(trx, PROBE, {
          ...waiting,
          now: T0,
          limit: 4,
          columns: ['created_at'],
        });
        const owners = new Map(chosen.map((c) => [c.id as string, `owner-of-${String(c.id)}`]));
        return claimChosen(trx, PROBE, {
          ...waiting,
          now: T0,
          leaseMs: 1_000,
          owners,
          set: () => ({ status: 'running' }),
        });
      });
    for (let round = 0; round < 10 && claimed.length < ids.length; round++) {
      const got = (await Promise.all(Array.from({ length: 4 }, chooseAndClaim))).flat();
      for (const r of got)
        expect(r).toMatchObject({ status: 'running', lease_owner: `owner-of-${String(r.id)}`, attempts: 1 });
      claimed.push(...got.map((r) => r.id as string));
    }
    expect(claimed.sort()).toEqual(ids);
  });

  it.runIf(dialect === 'postgres')(
    'claims in turns in one statement: each turn the oldest rows it may take that no earlier turn took, each for its owner in order; concurrent claims share none',
    async () => {
      const ids = await add(30);
      // Odd rows are for the first turn only; the second takes any row.
      const odd: typeof waiting.due = (eb) =>
        eb.and([waiting.due(eb), sql<boolean>`right(id, 1) in ('1', '3', '5', '7', '9')`]);
      const inTurns = (tag: string) =>
        claimInTurnsQuery(db, PROBE, {
          at: new Date(T0).toISOString(),
          lockedUntil: new Date(T0 + 1_000).toISOString(),
          set: () => ({ status: 'running' }),
          turns: [
            { due: odd, owners: [`${tag}-a1`, `${tag}-a2`] },
            { due: waiting.due, owners: [`${tag}-b1`, `${tag}-b2`, `${tag}-b3`] },
          ],
        });
      const first = (await db.executeQuery(inTurns('x'))).rows as unknown as Record<string, unknown>[];
      const owner = new Map(first.map((r) => [r.lease_owner, r.id]));
      // The first turn: the two oldest odd rows; the second: the three oldest left.
      expect(Object.fromEntries(owner)).toEqual({
        'x-a1': 'job-0001',
        'x-a2': 'job-0003',
        'x-b1': 'job-0000',
        'x-b2': 'job-0002',
        'x-b3': 'job-0004',
      });
      expect(first.every((r) => r.attempts === 1 && r.status === 'running')).toBe(true);
      const claimed = first.map((r) => r.id as string);
      for (let round = 0; round < 10 && claimed.length < ids.length; round++) {
        const got = await Promise.all(
          Array.from({ length: 4 }, (_, k) => db.executeQuery(inTurns(`r${round}-${k}`))),
        );
        claimed.push(
          ...got.flatMap((g) => (g.rows as unknown as Record<string, unknown>[]).map((r) => r.id as string)),
        );
      }
      expect(claimed.sort()).toEqual(ids);
    },
  );

  it('does not claim a chosen row that stopped being due or was leased by another before the UPDATE', async () => {
    const [a, b, c] = await add(3);
    const chosen = await chooseDue(db, PROBE, { ...waiting, now: T0, limit: 3, columns: [] });
    expect(chosen.map((r) => r.id)).toEqual([a, b, c]);
    await sql`update queue_probe set status = 'done' where id = ${a}`.execute(db);
    await take('someone-else', T0);
    const got = await claimChosen(db, PROBE, {
      ...waiting,
      now: T0,
      leaseMs: 1_000,
      owners: new Map(chosen.map((r) => [r.id as string, 'late'])),
    });
    expect(got.map((r) => r.id)).toEqual([c]);
    expect(await row(b!)).toMatchObject({ lease_owner: 'someone-else' });
  });

  it('fences every write by the owner: a holder whose lease was taken over writes nothing', async () => {
    const [id] = await add(1);
    await take('w1', T0);
    // w1's lease runs out; w2 takes the row over.
    expect((await take('w2', T0 + 2_000)).map((r) => r.id)).toEqual([id]);
    const w1 = { id: id!, owner: 'w1' };
    const w2 = { id: id!, owner: 'w2' };
    expect(
      await renew(db, PROBE, w1, { now: T0 + 2_100, leaseMs: 1_000, set: () => ({ note: 'w1' }) }),
    ).toBeUndefined();
    expect(await finish(db, PROBE, w1, { set: { status: 'done' } })).toBe(false);
    await release(db, PROBE, w1, { retryAt: null });
    expect(await row(id!)).toMatchObject({ status: 'running', lease_owner: 'w2', note: null, attempts: 2 });

    expect(
      await renew(db, PROBE, w2, { now: T0 + 2_100, leaseMs: 1_000, set: () => ({ note: 'w2' }) }),
    ).toMatchObject({ id, note: 'w2' });
    expect(await row(id!)).toMatchObject({ note: 'w2', locked_until: new Date(T0 + 3_100).toISOString() });
    // A state check on renew: a row no longer running is not renewed.
    expect(
      await renew(db, PROBE, w2, {
        now: T0 + 2_200,
        leaseMs: 1_000,
        where: (eb) => eb('status', '=', 'done'),
      }),
    ).toBeUndefined();
    expect(await finish(db, PROBE, w2, { set: { status: 'done' } })).toBe(true);
    expect(await row(id!)).toMatchObject({ status: 'done', lease_owner: null, locked_until: null });
  });

  it('retries by the schedule while attempts remain, then ends the row dead', async () => {
    const [id] = await add(1);
    const schedule = [100, 500];
    let now = T0;
    for (const [attempt, wait] of [
      [1, 100],
      [2, 500],
    ] as const) {
      const [r] = await take('w', now);
      expect(r).toMatchObject({ attempts: attempt });
      const outcome = await fail(
        db,
        PROBE,
        { id: id!, owner: 'w' },
        {
          now,
          attempts: attempt,
          maxAttempts: 3,
          schedule,
          dead: { status: 'dead' },
        },
      );
      expect(outcome).toBe('retry');
      // Not due until the backoff has passed, due right after.
      expect(await take('early', now + wait)).toEqual([]);
      now += wait + 1;
    }
    await take('w', now);
    expect(
      await fail(
        db,
        PROBE,
        { id: id!, owner: 'w' },
        { now, attempts: 3, maxAttempts: 3, schedule, dead: { status: 'dead' } },
      ),
    ).toBe('dead');
    expect(await row(id!)).toMatchObject({ status: 'dead', lease_owner: null, attempts: 3 });
    await expect(
      fail(
        db,
        PROBE,
        { id: id!, owner: 'w' },
        { now, attempts: 3, maxAttempts: 3, schedule, dead: { status: 'dead' } },
      ),
    ).rejects.toBeInstanceOf(LeaseLost);
  });

  it('releases a row, refunding the attempt when it was handed back on purpose', async () => {
    const [id] = await add(1);
    await take('w', T0);
    await release(db, PROBE, { id: id!, owner: 'w' }, { retryAt: null, refund: true });
    expect(await row(id!)).toMatchObject({ lease_owner: null, locked_until: null, attempts: 0 });
    expect(await take('w', T0)).toHaveLength(1);
  });

  it('lists the rows whose lease ran out while held', async () => {
    const [a, b] = await add(3);
    await take('w1', T0);
    await claim(db, PROBE, { ...waiting, now: T0, leaseMs: 5_000, owner: 'w2' });
    expect(await expiredLeases(db, PROBE, { now: T0 + 2_000, limit: 10 })).toEqual([a]);
    expect(await expiredLeases(db, PROBE, { now: T0 + 6_000, limit: 10 })).toEqual([a, b]);
  });
});

describe('a claim on SQLite', () => {
  /*
   * Two statements: the due ids, then the UPDATE of those rows. Outside a transaction another statement on
   * the one connection may run between them; here it runs from the SELECT's result, on the same connection.
   */
  let raw: SQLite.Database;
  let between: (() => void) | null = null;
  let db: Db;
  const rawRow = (id: string) => raw.prepare('select * from queue_probe where id = ?').get(id);
  const betweenStatements: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      const run = between;
      between = null;
      run?.();
      return args.result;
    },
  };

  beforeAll(() => {
    raw = new SQLite(':memory:');
    raw.exec(`create table queue_probe (id text primary key, status text not null, lease_owner text,
      locked_until text, attempts integer not null default 0, created_at text not null, note text)`);
    db = new Kysely({
      dialect: new SqliteDialect({ database: raw }),
      plugins: [betweenStatements],
    }) as unknown as Db;
  });
  afterAll(() => db?.destroy());
  beforeEach(() => {
    raw.exec('delete from queue_probe');
    const add = raw.prepare(`insert into queue_probe (id, status, created_at) values (?, 'waiting', ?)`);
    for (const [i, id] of ['a', 'b', 'c'].entries()) add.run(id, new Date(T0 + i).toISOString());
  });

  const take = (owner: string) =>
    claim(db, PROBE, {
      ...waiting,
      now: T0,
      leaseMs: 1_000,
      owner,
      limit: 2,
      set: () => ({ status: 'running' }),
    });

  it('does not take a row that stopped being due after the SELECT chose it', async () => {
    between = () => raw.prepare(`update queue_probe set status = 'done' where id = 'a'`).run();
    expect((await take('w1')).map((r) => r.id)).toEqual(['b']);
    expect(between).toBeNull();
    expect(rawRow('a')).toMatchObject({ status: 'done', lease_owner: null, locked_until: null, attempts: 0 });
  });

  it('does not take a row another claim leased after the SELECT chose it', async () => {
    const until = new Date(T0 + 5_000).toISOString();
    between = () =>
      raw
        .prepare(`update queue_probe set lease_owner = 'w2', locked_until = ?, attempts = 1 where id = 'b'`)
        .run(until);
    expect((await take('w1')).map((r) => r.id)).toEqual(['a']);
    expect(between).toBeNull();
    expect(rawRow('b')).toMatchObject({
      status: 'waiting',
      lease_owner: 'w2',
      locked_until: until,
      attempts: 1,
    });
  });
});
