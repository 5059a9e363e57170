import type { Kysely } from 'kysely';

/**
 * Compliance (compliance/): pack versions a workspace publishes on top of the packs the repository ships, never
 * updated; and every evaluation run, with the pack versions it used and each rule's outcome, never updated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('compliance_pack_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('celex', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('effective_from', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .execute();
  await db.schema
    .createIndex('compliance_pack_versions_version')
    .unique()
    .on('compliance_pack_versions')
    .columns(['tenant_id', 'celex', 'version'])
    .execute();
  await db.schema
    .createTable('compliance_evaluations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('sector', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('score', 'integer')
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('evaluated_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .execute();
  await db.schema
    .createIndex('compliance_evaluations_by_product')
    .on('compliance_evaluations')
    .columns(['product_id', 'sector', 'evaluated_at'])
    .execute();
}
