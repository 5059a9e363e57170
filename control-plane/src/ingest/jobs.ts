import { sql } from 'kysely';
import type { Db, IngestErrorTable, IngestJobTable } from '../store/index.js';
import { type LeaseColumns, claim, finish, release, renew } from '../queue/index.js';
import { DEFAULT_PAGE_SIZE, decodeNumberCursor, encodeCursor, toPage } from '../http/index.js';

/**
 * Job states. `receiving`: the upload is being spooled (not yet accepted; never shown to a caller).
 * `queued`: accepted (202), waiting for a worker. `processing`: a worker holds its lease and commits
 * rows chunk by chunk. `completed`: every row was handled (created or failed). `failed`: the job itself
 * failed (see `error`); the rows committed before stay committed and are counted.
 */
export type IngestStatus = 'receiving' | 'queued' | 'processing' | 'completed' | 'failed';

/** Row errors stored per job; failedRows always counts them all. */
export const MAX_STORED_ERRORS = 10_000;
/** Row errors the status answer carries; the rest page at /errors. */
export const STATUS_ERRORS = 100;

export async function insertJob(db: Db, job: IngestJobTable): Promise<void> {
  await db.insertInto('ingest_jobs').values(job).execute();
}

/** Spools one piece of an upload, and marks the upload alive (see purgeAbandonedUploads). */
export async function appendChunk(
  db: Db,
  jobId: string,
  seq: number,
  data: string,
  at: string,
): Promise<void> {
  await db.insertInto('ingest_upload_chunks').values({ job_id: jobId, seq, data }).execute();
  await db.updateTable('ingest_jobs').set({ updated_at: at }).where('id', '=', jobId).execute();
}

/** Removes a job that was never accepted, with its spooled upload. */
export async function discardJob(db: Db, jobId: string): Promise<void> {
  await db.deleteFrom('ingest_upload_chunks').where('job_id', '=', jobId).execute();
  await db.deleteFrom('ingest_jobs').where('id', '=', jobId).where('status', '=', 'receiving').execute();
}

export async function getJob(db: Db, tenantId: string, jobId: string): Promise<IngestJobTable | undefined> {
  return db
    .selectFrom('ingest_jobs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', jobId)
    .where('status', '<>', 'receiving')
    .executeTakeFirst();
}

export async function findJobByKey(
  db: Db,
  tenantId: string,
  key: string,
): Promise<IngestJobTable | undefined> {
  return db
    .selectFrom('ingest_jobs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

export async function readChunk(db: Db, jobId: string, seq: number): Promise<string | undefined> {
  const r = await db
    .selectFrom('ingest_upload_chunks')
    .select('data')
    .where('job_id', '=', jobId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return r?.data;
}

/** Where ingest jobs keep their lease (the queue module claims, renews and releases by it). */
const INGEST_QUEUE: LeaseColumns<'ingest_jobs'> = {
  table: 'ingest_jobs',
  id: 'id',
  owner: 'lease_owner',
  lockedUntil: 'locked_until',
  attempts: 'attempts',
  order: 'created_at',
};

/**
 * Claims the oldest job that is queued, or processing with an expired lease (its worker died), and
 * leases it to `owner` (the fencing token every later write checks).
 */
export async function claimJob(
  db: Db,
  opts: { now: number; leaseMs: number; owner: string },
): Promise<IngestJobTable | undefined> {
  const now = new Date(opts.now).toISOString();
  const [job] = await claim(db, INGEST_QUEUE, {
    ...opts,
    peek: true,
    due: (eb) => eb('status', 'in', ['queued', 'processing']),
    set: (eb) => ({
      status: 'processing',
      started_at: eb.fn.coalesce('started_at', sql.lit(now)),
      updated_at: now,
    }),
  });
  return job;
}

export interface Progress {
  processedRows: number;
  created: number;
  failed: number;
  errors: Omit<IngestErrorTable, 'job_id'>[];
}

/**
 * Records the progress of one committed chunk, in the chunk's transaction, and renews the lease. False
 * when the lease was lost (another worker took the job over): the caller must roll back.
 */
export async function commitProgress(
  trx: Db,
  job: { id: string; owner: string; errorsStored: number },
  p: Progress,
  opts: { now: number; leaseMs: number },
): Promise<{ ok: boolean; errorsStored: number }> {
  const room = Math.max(0, MAX_STORED_ERRORS - job.errorsStored);
  const stored = p.errors.slice(0, room);
  if (stored.length > 0) {
    await trx
      .insertInto('ingest_errors')
      .values(stored.map((e) => ({ job_id: job.id, ...e })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  const renewed = await renew(trx, INGEST_QUEUE, job, {
    ...opts,
    set: (eb) => ({
      processed_rows: p.processedRows,
      created_count: eb('created_count', '+', p.created),
      failed_count: eb('failed_count', '+', p.failed),
      errors_stored: eb('errors_stored', '+', stored.length),
      updated_at: new Date(opts.now).toISOString(),
    }),
    where: (eb) => eb('status', '=', 'processing'),
  });
  return { ok: renewed !== undefined, errorsStored: job.errorsStored + stored.length };
}

/** Ends a job (completed, or failed with a reason) and drops its spooled upload. */
export async function finishJob(
  db: Db,
  job: { id: string; owner: string },
  outcome: { status: 'completed' | 'failed'; error?: string; now: number },
): Promise<boolean> {
  const at = new Date(outcome.now).toISOString();
  return db.transaction().execute(async (trx) => {
    const done = await finish(trx, INGEST_QUEUE, job, {
      set: { status: outcome.status, error: outcome.error ?? null, finished_at: at, updated_at: at },
    });
    if (!done) return false;
    await trx.deleteFrom('ingest_upload_chunks').where('job_id', '=', job.id).execute();
    return true;
  });
}

/**
 * Gives the job back, keeping its progress: after a fault, to retry after `retryAt`; or handed back on
 * purpose (shutdown, time slice), which `refund` keeps from counting as an attempt, so a job that outlives
 * several rolling restarts is not marked failed for them.
 */
export async function releaseJob(
  db: Db,
  job: { id: string; owner: string },
  retryAt: string | null,
  refund = false,
): Promise<void> {
  await release(db, INGEST_QUEUE, job, { retryAt: retryAt === null ? null : Date.parse(retryAt), refund });
}

/**
 * Uploads never accepted whose last piece arrived before the cut-off (the request died mid-upload, or the
 * process did) are removed with what they spooled.
 */
export async function purgeAbandonedUploads(db: Db, olderThan: string): Promise<number> {
  const stale = await db
    .selectFrom('ingest_jobs')
    .select('id')
    .where('status', '=', 'receiving')
    .where('updated_at', '<', olderThan)
    .execute();
  for (const s of stale) await discardJob(db, s.id);
  return stale.length;
}

export async function listJobErrors(
  db: Db,
  jobId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  let q = db.selectFrom('ingest_errors').selectAll().where('job_id', '=', jobId);
  if (page.cursor) q = q.where('row', '>', decodeNumberCursor(page.cursor, 'row'));
  const rows = await q
    .orderBy('row')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, errorView, (r) => encodeCursor('row', r.row, String(r.row)));
}

export async function listJobCreated(
  db: Db,
  tenantId: string,
  jobId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  let q = db
    .selectFrom('products')
    .select(['id', 'ingest_row'])
    .where('tenant_id', '=', tenantId)
    .where('ingest_job_id', '=', jobId);
  if (page.cursor) q = q.where('ingest_row', '>', decodeNumberCursor(page.cursor, 'row'));
  const rows = await q
    .orderBy('ingest_row')
    .limit(limit + 1)
    .execute();
  return toPage(
    rows,
    limit,
    (r) => ({ row: r.ingest_row ?? 0, productId: r.id }),
    (r) => encodeCursor('row', r.ingest_row ?? 0, r.id),
  );
}

export function errorView(e: Pick<IngestErrorTable, 'row' | 'code' | 'message' | 'field'>) {
  return { row: e.row, code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) };
}

/** The status document of a job (GET /ingest/products/{jobId}). */
export async function jobView(db: Db, job: IngestJobTable) {
  const errors = await db
    .selectFrom('ingest_errors')
    .selectAll()
    .where('job_id', '=', job.id)
    .orderBy('row')
    .limit(STATUS_ERRORS)
    .execute();
  const statusUrl = `/api/v2/ingest/products/${job.id}`;
  return {
    id: job.id,
    status: job.status as IngestStatus,
    format: job.format,
    totalRows: job.total_rows,
    processedRows: job.processed_rows,
    createdRows: job.created_count,
    failedRows: job.failed_count,
    progress: job.total_rows === 0 ? 1 : Math.round((job.processed_rows / job.total_rows) * 10_000) / 10_000,
    errors: errors.map(errorView),
    errorsStored: job.errors_stored,
    errorsTruncated: job.failed_count > job.errors_stored,
    error: job.error,
    attempts: job.attempts,
    bytes: job.bytes,
    createdAt: job.created_at,
    startedAt: job.started_at,
    finishedAt: job.finished_at,
    updatedAt: job.updated_at,
    statusUrl,
    _links: { self: statusUrl, created: `${statusUrl}/created`, errors: `${statusUrl}/errors` },
  };
}
