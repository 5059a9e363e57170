import { type Kysely, sql } from 'kysely';

/**
 * One serial has at most one print job that is not dead-lettered or cancelled (409 PRINT_JOB_EXISTS).
 * The service reads before it inserts, to name the job it collides with; this index is what holds when
 * two creates race past that read (on PostgreSQL both reads can see nothing). Both states are terminal,
 * so a row never moves back under the index. A database where such a race already left two open jobs for
 * one serial stops at this migration, naming the index: cancel the one still QUEUED
 * (POST /api/v2/aidc/jobs/{ref}/cancel) and start again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unique index print_jobs_one_open_per_serial on print_jobs (tenant_id, gtin, serial)
    where state not in ('DEAD_LETTER', 'CANCELLED')`.execute(db);
}
