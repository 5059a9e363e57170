import type { Kysely } from 'kysely';

/**
 * The seal receipt of each SEALED job: a JWS the control plane signs over the evidence bundle's hash, the
 * EPCIS commissioning event and the time. One per job, never updated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('seal_receipts')
    .addColumn('job_ref', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('serial', 'text', (c) => c.notNull())
    .addColumn('receipt', 'text', (c) => c.notNull())
    .addColumn('bundle_sha256', 'text', (c) => c.notNull())
    .addColumn('epcis_event_id', 'text')
    .addColumn('sealed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('seal_receipts_label')
    .on('seal_receipts')
    .columns(['tenant_id', 'gtin', 'serial'])
    .execute();
}
