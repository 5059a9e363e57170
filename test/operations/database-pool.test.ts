import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresAvailable, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';

/** The PostgreSQL backends that answered `queries` statements sent at once through the control plane's store. */
async function backendsAnswering(t: TestControlPlane, queries: number): Promise<Set<number>> {
  const rows = await Promise.all(
    Array.from({ length: queries }, () =>
      sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.02)`.execute(t.cp.store.db),
    ),
  );
  return new Set(rows.map((r) => r.rows[0]!.pid));
}

/**
 * The backends of the pool: those that answered bursts of `queries` statements, up to three bursts until `expected`
 * answered (a background worker of the control plane may hold one connection through a whole burst on a busy
 * machine). The pool's connections stay open between bursts, so the union is never more than the pool.
 */
async function poolBackends(t: TestControlPlane, queries: number, expected: number): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let burst = 0; burst < 3 && seen.size < expected; burst++)
    for (const pid of await backendsAnswering(t, queries)) seen.add(pid);
  return seen;
}

describe.skipIf(!postgresAvailable())('DATABASE_POOL_SIZE', () => {
  let t: TestControlPlane | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is how many connections a replica keeps to PostgreSQL', async () => {
    t = await startTestControlPlane({ dialect: 'postgres', env: { DATABASE_POOL_SIZE: '3' } });
    expect((await poolBackends(t, 24, 3)).size).toBe(3);
  });

  it('is 10 when not set', async () => {
    t = await startTestControlPlane({ dialect: 'postgres' });
    expect((await poolBackends(t, 40, 10)).size).toBe(10);
  });
});
