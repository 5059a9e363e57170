import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from '../config/index.js';
import { openTestStore, testDialects } from '@dpp/testkit';
import { RateLimiter } from './rate-limit.js';
import { RateShare } from './rate-share.js';

const log = pino({ level: 'silent' });
const budgets = { ...DEFAULT_RATE_LIMITS, free: { limit: 10, windowSeconds: 60 } };

describe.each(testDialects())('rate limits shared by two replicas (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let clock: number;
  let a: RateLimiter;
  let b: RateLimiter;
  let shareA: RateShare;
  let shareB: RateShare;
  beforeEach(async () => {
    store = await openTestStore(dialect);
    clock = Date.parse('2026-11-22T12:00:00Z');
    a = new RateLimiter(budgets, () => clock);
    b = new RateLimiter(budgets, () => clock);
    shareA = new RateShare(store.db, a, log);
    shareB = new RateShare(store.db, b, log);
  });
  afterEach(() => store.drop());

  const admitted = (l: RateLimiter, n: number, tenant = 't1') =>
    Array.from({ length: n }, () => l.take(tenant, 'free').allowed).filter(Boolean).length;

  it('holds one budget across both once they have synced, and each learns the other’s count', async () => {
    expect(admitted(a, 6)).toBe(6);
    clock += 1000;
    expect(admitted(b, 6)).toBe(6); // neither knows of the other yet: the bound is one sync interval
    await shareA.syncOnce();
    await shareB.syncOnce(); // the shared count is 12 now: B has heard of A's 6
    expect(b.take('t1', 'free')).toMatchObject({ allowed: false, remaining: 0 });
    expect(admitted(a, 1)).toBe(1); // A has not heard of B's yet
    await shareA.syncOnce();
    expect(a.take('t1', 'free')).toMatchObject({ allowed: false, remaining: 0 });
    const row = await store.db.selectFrom('rate_windows').selectAll().executeTakeFirstOrThrow();
    expect(Number(row.used)).toBe(13);
    // Both count in the window A began, and answer the same reset time.
    expect(b.take('t1', 'free').resetAt).toBe(a.take('t1', 'free').resetAt);
    // Another tenant has its own window.
    expect(admitted(b, 3, 't2')).toBe(3);
  });

  it('starts a new shared window once the old one has ended', async () => {
    expect(admitted(a, 10)).toBe(10);
    await shareA.syncOnce();
    clock += 60_000;
    expect(admitted(b, 4)).toBe(4);
    await shareB.syncOnce();
    const row = await store.db.selectFrom('rate_windows').selectAll().executeTakeFirstOrThrow();
    expect([Number(row.started_ms), Number(row.used)]).toEqual([clock, 4]);
    // A's window ended too: it admits again, and learns of B's 4 at its next sync.
    expect(admitted(a, 2)).toBe(2);
    await shareA.syncOnce();
    expect(a.take('t1', 'free').remaining).toBe(10 - 7);
  });

  it('sends again what a failed sync could not add', async () => {
    expect(admitted(a, 5)).toBe(5);
    const closed = await openTestStore(dialect);
    await closed.drop(); // a store that is gone: the sync fails
    await expect(new RateShare(closed.db, a, log).syncOnce()).rejects.toThrow();
    await shareA.syncOnce();
    const row = await store.db.selectFrom('rate_windows').selectAll().executeTakeFirstOrThrow();
    expect(Number(row.used)).toBe(5);
  });
});
