import type { Kysely } from 'kysely';

/** Orchestrated print jobs, their attempts (fencing tokens) and evidence. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('print_jobs')
    .addColumn('job_ref', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('gtin', 'text', (c) => c.notNull())
    .addColumn('serial', 'text', (c) => c.notNull())
    .addColumn('digital_link', 'text', (c) => c.notNull())
    .addColumn('sgtin96_epc', 'text', (c) => c.notNull())
    .addColumn('label_template', 'text', (c) => c.notNull())
    .addColumn('printer', 'text')
    .addColumn('requires_rfid', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempt_id', 'text')
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('device_id', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_by', 'text')
    .addColumn('correlation_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('terminal_at', 'text')
    .execute();
  await db.schema
    .createIndex('print_jobs_claimable')
    .on('print_jobs')
    .columns(['tenant_id', 'state', 'created_at'])
    .execute();
  await db.schema
    .createIndex('print_jobs_serial')
    .on('print_jobs')
    .columns(['tenant_id', 'gtin', 'serial'])
    .execute();
  await db.schema
    .createIndex('print_jobs_lease')
    .on('print_jobs')
    .columns(['state', 'lease_expires_at'])
    .execute();

  await db.schema
    .createTable('print_attempts')
    .addColumn('attempt_id', 'text', (c) => c.primaryKey())
    .addColumn('job_ref', 'text', (c) => c.notNull().references('print_jobs.job_ref'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('printer', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('envelope_jti', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'text')
    .addColumn('failure_reason', 'text')
    .execute();
  await db.schema
    .createIndex('print_attempts_job')
    .on('print_attempts')
    .columns(['job_ref', 'number'])
    .execute();

  await db.schema
    .createTable('print_evidence')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_ref', 'text', (c) => c.notNull())
    .addColumn('attempt_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('print_evidence_job')
    .on('print_evidence')
    .columns(['job_ref', 'recorded_at'])
    .execute();
}
