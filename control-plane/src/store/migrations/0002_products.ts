import { sql, type Kysely } from 'kysely';

/** Products, their version history, and bulk ingest jobs with their spooled uploads and row errors. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('products')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('jurisdiction', 'text', (c) => c.notNull())
    .addColumn('schema_id', 'text', (c) => c.notNull())
    .addColumn('schema_version', 'text', (c) => c.notNull())
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('serial_number', 'text', (c) => c.notNull())
    .addColumn('granularity', 'text', (c) => c.notNull())
    .addColumn('company_prefix_length', 'integer', (c) => c.notNull())
    .addColumn('extensions', 'text', (c) => c.notNull())
    .addColumn('custom_data', 'text')
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('voided_at', 'text')
    .addColumn('void_reason', 'text')
    .addColumn('published_at', 'text')
    .addColumn('print_loop_at', 'text')
    .addColumn('ingest_job_id', 'text')
    .addColumn('ingest_row', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // DUPLICATE_GTIN: one model-granularity product per GTIN and tenant (api-v2.md, Product create request).
  await db.schema
    .createIndex('products_model_gtin')
    .on('products')
    .columns(['tenant_id', 'gtin'])
    .unique()
    .where(sql.ref('granularity'), '=', sql.lit('model'))
    .execute();
  // Item and batch granularity: one product per GTIN and serial (or lot) number.
  await db.schema
    .createIndex('products_gtin_serial')
    .on('products')
    .columns(['tenant_id', 'gtin', 'serial_number'])
    .unique()
    .where(sql.ref('granularity'), '<>', sql.lit('model'))
    .execute();
  for (const [name, columns] of [
    ['products_tenant_created', ['tenant_id', 'created_at', 'id']],
    ['products_tenant_updated', ['tenant_id', 'updated_at', 'id']],
    ['products_tenant_name', ['tenant_id', 'name_key', 'id']],
    ['products_tenant_category', ['tenant_id', 'category', 'created_at', 'id']],
    ['products_ingest', ['ingest_job_id', 'ingest_row']],
  ] as const) {
    await db.schema
      .createIndex(name)
      .on('products')
      .columns([...columns])
      .execute();
  }

  await db.schema
    .createTable('product_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('changed_fields', 'text', (c) => c.notNull())
    .addColumn('change', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('correlation_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('product_versions_product_version', ['product_id', 'version'])
    .execute();

  await db.schema
    .createTable('ingest_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('content_sha256', 'text')
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('total_rows', 'integer', (c) => c.notNull())
    .addColumn('processed_rows', 'integer', (c) => c.notNull())
    .addColumn('created_count', 'integer', (c) => c.notNull())
    .addColumn('failed_count', 'integer', (c) => c.notNull())
    .addColumn('errors_stored', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('correlation_id', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addUniqueConstraint('ingest_jobs_idempotency', ['tenant_id', 'idempotency_key'])
    .execute();
  await db.schema
    .createIndex('ingest_jobs_due')
    .on('ingest_jobs')
    .columns(['status', 'locked_until'])
    .execute();

  await db.schema
    .createTable('ingest_upload_chunks')
    .addColumn('job_id', 'text', (c) => c.notNull().references('ingest_jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('ingest_upload_chunks_pk', ['job_id', 'seq'])
    .execute();

  await db.schema
    .createTable('ingest_errors')
    .addColumn('job_id', 'text', (c) => c.notNull().references('ingest_jobs.id').onDelete('cascade'))
    .addColumn('row', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('field', 'text')
    .addPrimaryKeyConstraint('ingest_errors_pk', ['job_id', 'row'])
    .execute();
}
