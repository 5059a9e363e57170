import { type Kysely, sql } from 'kysely';

/**
 * Indexes for the print loop at fleet rate. A result reads the evidence its attempt recorded before (the
 * render manifest at SPOOL_SUBMITTED, the attestation at SCAN_VERIFIED, all of it at SEALED): by attempt,
 * not a scan of every label's evidence. A claim takes the oldest claimable job of a tenant: the partial index
 * holds only QUEUED and FAILED jobs in claim order, so the claim reads the head of the queue instead of
 * sorting the tenant's whole history (SEALED jobs never enter it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('print_evidence_attempt')
    .on('print_evidence')
    .columns(['attempt_id', 'kind'])
    .execute();
  await sql`
    create index print_jobs_claim_order on print_jobs (tenant_id, created_at, job_ref)
    where state in ('QUEUED', 'FAILED')`.execute(db);
}
