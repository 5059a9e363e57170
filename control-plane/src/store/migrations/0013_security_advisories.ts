import type { Kysely } from 'kysely';

/**
 * Security advisories a workspace publishes (advisories/): one row per advisory with its current content,
 * and one row per revision, never updated, so every version stays readable (the CSAF revision history).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('security_advisories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('tracking_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('initial_release_date', 'text', (c) => c.notNull())
    .addColumn('current_release_date', 'text', (c) => c.notNull())
    .addColumn('withdrawn_at', 'text')
    .addColumn('withdrawal_reason', 'text')
    .execute();
  await db.schema
    .createIndex('security_advisories_tracking_id')
    .unique()
    .on('security_advisories')
    .columns(['tenant_id', 'tracking_id'])
    .execute();
  await db.schema
    .createIndex('security_advisories_seq')
    .unique()
    .on('security_advisories')
    .columns(['tenant_id', 'seq'])
    .execute();
  await db.schema
    .createTable('security_advisory_revisions')
    .addColumn('advisory_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addPrimaryKeyConstraint('security_advisory_revisions_pk', ['advisory_id', 'version'])
    .execute();
}
