import type { Kysely } from 'kysely';

/**
 * The rate windows shared by control-plane replicas (see http/rate-share.ts): per tenant, when the current
 * window started (Unix ms) and how many requests all replicas admitted in it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_windows')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey())
    .addColumn('started_ms', 'bigint', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .execute();
}
