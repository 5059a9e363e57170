import type { Kysely } from 'kysely';

/**
 * The send gate of a print-job attempt: when its device said it was about to send the label (a heartbeat
 * with `sending: true`). From then on the label may be out, so the reaper never returns the job to the
 * claim pool; null for an attempt that has not reached the printer yet.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('print_jobs').addColumn('sending_at', 'text').execute();
}
