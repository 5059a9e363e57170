import type { Kysely } from 'kysely';

/** Serial counters, batches and serials of the print loop; captured and recorded EPCIS events. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('carrier_serial_counters')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('next_serial', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('carrier_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('first_serial', 'bigint', (c) => c.notNull())
    .addColumn('last_serial', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('correlation_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('carrier_batches_product')
    .on('carrier_batches')
    .columns(['tenant_id', 'product_id', 'created_at'])
    .execute();

  // No foreign keys on the serials: a batch inserts up to 10,000 rows in one statement, and the rows
  // outlive nothing they point at (a product with serials cannot be deleted: PRODUCT_REFERENCED).
  await db.schema
    .createTable('carrier_serials')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('serial', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('allocated_at', 'text', (c) => c.notNull())
    .addColumn('print_status', 'text')
    .addColumn('print_reason', 'text')
    .addColumn('print_device_id', 'text')
    .addColumn('print_reported_at', 'text')
    .addColumn('print_source', 'text')
    .addColumn('print_report_ref', 'text')
    .addPrimaryKeyConstraint('carrier_serials_pk', ['tenant_id', 'serial'])
    .execute();
  // The export's keyset order (all serials of a tenant, or one batch: a contiguous range).
  await db.schema
    .createIndex('carrier_serials_tenant_seq')
    .on('carrier_serials')
    .columns(['tenant_id', 'seq'])
    .unique()
    .execute();
  await db.schema
    .createIndex('carrier_serials_product_seq')
    .on('carrier_serials')
    .columns(['tenant_id', 'product_id', 'seq'])
    .execute();
  // The public GS1 resolver (/01/{gtin}/21/{serial}) finds a printed label by these two.
  await db.schema
    .createIndex('carrier_serials_gtin_serial')
    .on('carrier_serials')
    .columns(['gtin', 'serial'])
    .execute();

  await db.schema
    .createTable('epcis_captures')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('stored_count', 'integer', (c) => c.notNull())
    .addColumn('duplicate_count', 'integer', (c) => c.notNull())
    .addColumn('correlation_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('epcis_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('event_time', 'text', (c) => c.notNull())
    .addColumn('record_time', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('biz_step', 'text')
    .addColumn('disposition', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('capture_id', 'text')
    .addColumn('context', 'text')
    .addColumn('document', 'text', (c) => c.notNull())
    .addUniqueConstraint('epcis_events_event_id', ['tenant_id', 'event_id'])
    .execute();
  await db.schema
    .createIndex('epcis_events_time')
    .on('epcis_events')
    .columns(['tenant_id', 'event_time', 'id'])
    .execute();

  await db.schema
    .createTable('epcis_event_epcs')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('epc', 'text', (c) => c.notNull())
    .addColumn('event_row_id', 'text', (c) => c.notNull().references('epcis_events.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('epcis_event_epcs_pk', ['tenant_id', 'epc', 'event_row_id'])
    .execute();
}
