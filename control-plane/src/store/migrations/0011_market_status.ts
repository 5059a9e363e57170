import type { Kysely } from 'kysely';

/**
 * The market status of a passport's item, as its publisher records it (placed on the market, withdrawn,
 * recalled): one row per change, never updated, so the rows are the audit trail and the newest is the status.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passport_market_status')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('effective_at', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('correlation_id', 'text')
    .execute();
  await db.schema
    .createIndex('passport_market_status_by_passport')
    .on('passport_market_status')
    .columns(['product_id', 'recorded_at'])
    .execute();
}
