import type { Kysely } from 'kysely';

/**
 * Registrations of passports in the EU digital product passport registry (registerDPP, ESPR Art. 13): one row
 * per passport version the registry accepted, never updated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('eu_registry_registrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('digital_link', 'text', (c) => c.notNull())
    .addColumn('registry_reference', 'text')
    .addColumn('registered_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .execute();
  await db.schema
    .createIndex('eu_registry_registrations_version')
    .unique()
    .on('eu_registry_registrations')
    .columns(['product_id', 'version_id'])
    .execute();
}
