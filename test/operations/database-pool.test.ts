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

describe.skipIf(!postgresAvailable())('DATABASE_POOL_SIZE', () => {
  let t: TestControlPlane | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is how many connections a replica keeps to PostgreSQL', async () => {
    t = await startTestControlPlane({ dialect: 'postgres', env: { DATABASE_POOL_SIZE: '3' } });
    expect((await backendsAnswering(t, 24)).size).toBe(3);
  });

  it('is 10 when not set', async () => {
    t = await startTestControlPlane({ dialect: 'postgres' });
    expect((await backendsAnswering(t, 40)).size).toBe(10);
  });
});
