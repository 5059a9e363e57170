import type { Kysely } from 'kysely';

/**
 * Passports: the passport of each product, its immutable version chain, generation requests, lifecycle
 * commands, anchored validations, the lifecycle log, registered Digital Links, tenant issuer keys and
 * registry broadcasts. Also the resolver's cross-tenant index on products (GTIN, serial).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passports')
    .addColumn('product_id', 'text', (c) => c.primaryKey().references('products.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('disclosure_tier', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('section_tiers', 'text', (c) => c.notNull())
    .addColumn('generated_at', 'text', (c) => c.notNull())
    .addColumn('generation_request_id', 'text', (c) => c.notNull())
    .addColumn('generated_credential', 'text', (c) => c.notNull())
    .addColumn('generated_product_version', 'integer', (c) => c.notNull())
    .addColumn('current_version', 'integer', (c) => c.notNull())
    .addColumn('current_version_id', 'text')
    .addColumn('current_hash', 'text')
    .addColumn('first_published_at', 'text')
    .addColumn('successor_id', 'text')
    .addColumn('state_changed_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('passports_tenant')
    .on('passports')
    .columns(['tenant_id', 'product_id'])
    .execute();

  await db.schema
    .createTable('passport_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) =>
      c.notNull().references('passports.product_id').onDelete('cascade'),
    )
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('previous_version_id', 'text')
    .addColumn('previous_hash', 'text')
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('section_tiers', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('merkle_root', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('amendment_reason', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('correlation_id', 'text')
    // Two concurrent publishes cannot both mint version N+1.
    .addUniqueConstraint('passport_versions_product_version', ['product_id', 'version'])
    .execute();

  await db.schema
    .createTable('passport_generations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('stage', 'text')
    .addColumn('stages', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('warnings', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('result', 'text')
    .addColumn('sandbox', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('correlation_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('passport_generations_due')
    .on('passport_generations')
    .columns(['status', 'locked_until', 'created_at'])
    .execute();
  await db.schema
    .createIndex('passport_generations_product')
    .on('passport_generations')
    .columns(['tenant_id', 'product_id', 'status'])
    .execute();

  await db.schema
    .createTable('passport_commands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) =>
      c.notNull().references('passports.product_id').onDelete('cascade'),
    )
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('from_state', 'text', (c) => c.notNull())
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('causation_id', 'text')
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .addColumn('principal_type', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'text')
    .addUniqueConstraint('passport_commands_key', ['tenant_id', 'idempotency_key'])
    .execute();
  await db.schema
    .createIndex('passport_commands_product')
    .on('passport_commands')
    .columns(['product_id', 'applied_at'])
    .execute();

  await db.schema
    .createTable('passport_validations')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('signature_algorithm', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('credential_types', 'text', (c) => c.notNull())
    .addColumn('credential', 'text', (c) => c.notNull())
    .addColumn('jrc_anchor', 'text')
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('passport_validations_digest', ['product_id', 'digest'])
    .execute();

  await db.schema
    .createTable('passport_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('correlation_id', 'text')
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('passport_log_product')
    .on('passport_log')
    .columns(['product_id', 'occurred_at'])
    .execute();

  await db.schema
    .createTable('dpp_identifiers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) =>
      c.notNull().unique().references('products.id').onDelete('cascade'),
    )
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('serial', 'text', (c) => c.notNull())
    .addColumn('digital_link', 'text', (c) => c.notNull())
    .addColumn('passport_type', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('merkle_root', 'text', (c) => c.notNull())
    .addColumn('credential', 'text', (c) => c.notNull())
    .addColumn('publish_to_wallet', 'integer', (c) => c.notNull())
    .addColumn('registered_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('passport_issuer_keys')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('private_seed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('registry_broadcasts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('registries', 'text', (c) => c.notNull())
    .addColumn('results', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // The GS1 resolver is public and tenant-less: it finds every product with a GTIN and serial, in any
  // tenant (products_gtin_serial starts with tenant_id and covers item/batch granularity only).
  await db.schema
    .createIndex('products_resolver_key')
    .on('products')
    .columns(['gtin', 'serial_number'])
    .execute();
}
