import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';

/** Resolves with what `p` settled to, or 'hung' when it did not settle within `ms`. */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), ms)));
  try {
    return await Promise.race([p, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A store that stops answering (a unit of work that never ends, a lock held by someone else) must not take
 * readiness or shutdown down with it: /readyz says 503 within READY_TIMEOUT_MS, and a stop finishes within
 * SHUTDOWN_GRACE_MS even with a request stuck on the store.
 */
describe.each(testDialects())('a stuck store (%s)', (dialect) => {
  let t: TestControlPlane | undefined;
  let release = () => {};
  afterEach(async () => {
    release();
    await t?.close();
    t = undefined;
  });

  it('turns /readyz to 503 when the store does not answer, and shutdown still ends within its grace', async () => {
    t = await startTestControlPlane({
      dialect,
      env: { READY_TIMEOUT_MS: '300', SHUTDOWN_GRACE_MS: '1500' },
    });
    const { db } = t.cp.store;
    const held = new Promise<void>((r) => (release = r));
    let holding = () => {};
    const locked = new Promise<void>((r) => (holding = r));
    // On SQLite the one connection is held; on PostgreSQL the key table is locked by another session.
    const unit = db
      .transaction()
      .execute(async (trx) => {
        if (dialect === 'postgres') await sql`lock table api_keys in access exclusive mode`.execute(trx);
        holding();
        await held;
      })
      .catch(() => undefined);
    await locked;

    const ready = await settledWithin(t.call('GET', '/readyz'), 5_000);
    expect(ready).not.toBe('hung');
    if (ready === 'hung') return;
    if (dialect === 'sqlite') {
      expect(ready.status).toBe(503);
      expect(ready.body.reason).toMatch(/did not answer within 300 ms/);
    } else {
      expect(ready.status).toBe(200); // `select 1` still answers: only one table is locked
    }
    expect((await t.call('GET', '/healthz')).status).toBe(200);

    // A request that needs the store (its API key) and will never get it.
    const stuck = t.call('GET', '/api/v2/products', { key: t.tenants.a.admin }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    const closed = await settledWithin(t.cp.close(), 6_000);
    expect(closed).not.toBe('hung');
    const answer = await settledWithin(stuck, 2_000);
    expect(answer).not.toBe('hung'); // its socket was closed

    if (dialect === 'sqlite') {
      // The file's locks went with the stopped control plane: another process could open and write it.
      const file = new SQLite(path.join(t.dataDir, 'control-plane.sqlite'));
      try {
        file.pragma('busy_timeout = 0');
        expect(() => file.exec('begin immediate; rollback')).not.toThrow();
      } finally {
        file.close();
      }
    }
    release();
    await unit;
  });
});
