import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, testDialects } from '@dpp/testkit';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';
import { findIdempotencyKeys } from './idempotency-keys.js';

const row = (tenantId: string, route: string, key: string) => ({
  tenant_id: tenantId,
  route,
  key,
  request_hash: `hash-${key}`,
  state: 'completed',
  response_status: 200,
  response_body: '{}',
  response_headers: null,
  locked_at: '2026-01-01T00:00:00.000Z',
  created_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2099-01-01T00:00:00.000Z',
});

async function fill(db: Db, n: number): Promise<string[]> {
  const keys = Array.from({ length: n }, (_, i) => `key-${String(i).padStart(5, '0')}`);
  for (let i = 0; i < keys.length; i += 200) {
    await db
      .insertInto('idempotency_keys')
      .values(keys.slice(i, i + 200).map((k) => row('t', 'POST /r', k)))
      .execute();
  }
  // The same keys under another route and another tenant, which a lookup must not answer.
  await db
    .insertInto('idempotency_keys')
    .values([row('t', 'POST /other', keys[0]!), row('u', 'POST /r', keys[1]!)])
    .execute();
  return keys;
}

describe.each(testDialects())('reading several Idempotency-Keys at once (%s)', (dialect) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('answers the rows of the keys asked for, of that owner and route only', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    const keys = await fill(store.db, 300);
    const asked = [keys[0]!, keys[1]!, keys[299]!, 'never-kept'];
    const rows = await findIdempotencyKeys(store.db, { tenantId: 't', route: 'POST /r' }, asked);
    expect(rows.map((r) => [r.tenant_id, r.route, r.key, r.request_hash]).sort()).toEqual(
      [keys[0]!, keys[1]!, keys[299]!].map((k) => ['t', 'POST /r', k, `hash-${k}`]),
    );
    expect(await findIdempotencyKeys(store.db, { tenantId: 't', route: 'POST /r' }, [])).toEqual([]);
  });

  it('looks each key up on the primary key, not through every key of the route (PostgreSQL, no statistics yet)', async () => {
    const store = await openTestStore(dialect);
    drop = store.drop;
    if (!isPostgres(store.db)) return;
    const keys = await fill(store.db, 2000);
    // The table is new: autovacuum has not analyzed it, as on a new deployment.
    const fetched = await store.db.transaction().execute(async (trx) => {
      const rows = await findIdempotencyKeys(trx, { tenantId: 't', route: 'POST /r' }, keys.slice(0, 20));
      expect(rows).toHaveLength(20);
      const { rows: stats } = await sql<{ fetched: number }>`
        select coalesce(idx_tup_fetch, 0)::int as fetched from pg_stat_xact_user_tables
        where relname = 'idempotency_keys' and schemaname = current_schema()`.execute(trx);
      return stats[0]!.fetched;
    });
    // One heap row per key found; reading the route's keys fetched all 2,000.
    expect(fetched).toBeLessThanOrEqual(20);
  });
});
