/**
 * Retention: what the control plane keeps of work that has ended, purged by the hourly housekeeping once it
 * is older than `RETENTION_DAYS`:
 *
 * - outbox rows dispatched before then (the `events` table keeps every event, and `GET /events` reads it);
 * - webhook deliveries that ended before then (delivered, or failed for good), with their attempts;
 * - ingest jobs that finished before then (completed or failed), with their row errors.
 *
 * Nothing pending, running or retrying is touched. Deletes go in batches of their own transactions, so a long
 * backlog never holds the write lock for long.
 */
import type { Db } from '../store/index.js';

export interface RetentionReport {
  outbox: number;
  webhookDeliveries: number;
  ingestJobs: number;
}

const BATCH = 1000;

/**
 * Purges in batches, each in its own transaction: `pick` chooses up to BATCH ids, `remove` deletes
 * them (children first). Stops when a batch comes back short; returns how many ids went.
 */
async function inBatches(
  db: Db,
  pick: (trx: Db) => Promise<Array<{ id: string }>>,
  remove: (trx: Db, ids: string[]) => Promise<void>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.transaction().execute(async (trx) => {
      const ids = (await pick(trx)).map((r) => r.id);
      if (ids.length > 0) await remove(trx, ids);
      return ids.length;
    });
    total += n;
    if (n < BATCH) return total;
  }
}

/** Purges what ended before `olderThan` (an ISO timestamp). */
export async function purgeEndedWork(db: Db, olderThan: string): Promise<RetentionReport> {
  const outbox = await inBatches(
    db,
    (trx) =>
      trx
        .selectFrom('outbox')
        .select('id')
        .where('processed_at', 'is not', null)
        .where('processed_at', '<', olderThan)
        .limit(BATCH)
        .execute(),
    async (trx, ids) => {
      await trx.deleteFrom('outbox').where('id', 'in', ids).execute();
    },
  );

  const webhookDeliveries = await inBatches(
    db,
    (trx) =>
      trx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', 'in', ['delivered', 'failed'])
        .where('completed_at', '<', olderThan)
        .limit(BATCH)
        .execute(),
    async (trx, ids) => {
      await trx.deleteFrom('webhook_delivery_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    },
  );

  const ingestJobs = await inBatches(
    db,
    (trx) =>
      trx
        .selectFrom('ingest_jobs')
        .select('id')
        .where('status', 'in', ['completed', 'failed'])
        .where('finished_at', '<', olderThan)
        .limit(BATCH)
        .execute(),
    async (trx, ids) => {
      await trx.deleteFrom('ingest_errors').where('job_id', 'in', ids).execute();
      await trx.deleteFrom('ingest_upload_chunks').where('job_id', 'in', ids).execute();
      await trx.deleteFrom('ingest_jobs').where('id', 'in', ids).execute();
    },
  );

  return { outbox, webhookDeliveries, ingestJobs };
}
