import { randomUUID } from 'node:crypto';
import { PollingLoop } from '../workers/index.js';
import type { Environment } from '../config/index.js';
import { ApiError, type Actor } from '../http/index.js';
import type { Logger } from '../logging/logger.js';
import { LeaseLost, retryDelay } from '../queue/index.js';
import { insertPrepared, prepareCreate, type PreparedItem, type WriteContext } from '../products/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db, IngestJobTable } from '../store/index.js';
import { claimJob, commitProgress, finishJob, purgeAbandonedUploads, readChunk, releaseJob } from './jobs.js';
import { createRowReader, type IngestFormat, type UploadRow } from './rows.js';

export interface IngestWorkerOptions {
  db: Db;
  registry: SchemaRegistry;
  env: Environment;
  log: Logger;
  now?: () => number;
  /** Idle poll interval. */
  pollMs?: number;
  /** A worker that stops renewing its lease (a crash) loses the job after this long. */
  leaseMs?: number;
  /** Rows committed per transaction. */
  rowsPerCommit?: number;
  /** Claims of one job before it is marked failed. */
  maxAttempts?: number;
}

export type RunResult = 'idle' | 'completed' | 'failed' | 'yielded' | 'retry';

const RETRY_AFTER_MS = [1_000, 5_000, 30_000, 120_000];
const ABANDONED_UPLOAD_MS = 3_600_000;

/**
 * Works through accepted ingest jobs. Rows are validated with the create contract of POST /products and
 * committed `rowsPerCommit` at a time; each commit also records the job's progress (last row handled,
 * counts, row errors) and renews the lease, in the same transaction. So after a crash another worker (or
 * this one after a restart) claims the job once its lease expires and resumes after the last committed
 * row: no row is committed twice or lost. A job whose runs keep failing (faults and crashes count, a
 * graceful hand-back does not) is marked `failed` after `maxAttempts`, with the rows committed so far
 * kept and counted.
 */
export class IngestWorker {
  private readonly db: Db;
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly rowsPerCommit: number;
  private readonly maxAttempts: number;
  private readonly loop: PollingLoop;
  private lastPurge = 0;

  constructor(private readonly opts: IngestWorkerOptions) {
    this.db = opts.db;
    this.now = opts.now ?? Date.now;
    this.pollMs = opts.pollMs ?? 250;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.rowsPerCommit = opts.rowsPerCommit ?? 500;
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.loop = new PollingLoop({
      name: 'ingest',
      pollMs: this.pollMs,
      log: opts.log,
      pass: async () => {
        await this.housekeeping();
        return (await this.runOnce()) === 'idle' ? 'idle' : 'worked';
      },
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the commit in hand; the job's lease is released so a restart resumes it at once. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** A job was queued: look now instead of at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  private async housekeeping(): Promise<void> {
    if (this.now() - this.lastPurge < 600_000) return;
    this.lastPurge = this.now();
    await purgeAbandonedUploads(this.db, new Date(this.now() - ABANDONED_UPLOAD_MS).toISOString());
  }

  /**
   * Claims one due job and works on it. `maxCommits` hands the job back after that many commits (its
   * progress kept, its lease released), so one huge import cannot starve the others.
   */
  async runOnce(options: { maxCommits?: number } = {}): Promise<RunResult> {
    const owner = randomUUID();
    const job = await claimJob(this.db, { now: this.now(), leaseMs: this.leaseMs, owner });
    if (!job) return 'idle';
    const lease = { id: job.id, owner };
    const log = this.opts.log.child({ ingestJob: job.id, tenant: job.tenant_id });
    if (job.attempts > this.maxAttempts) {
      const error = `gave up after ${this.maxAttempts} attempts; rows 1 to ${job.processed_rows} were committed`;
      await finishJob(this.db, lease, { status: 'failed', error, now: this.now() });
      log.warn({ attempts: job.attempts }, 'ingest job failed');
      return 'failed';
    }
    try {
      return await this.process(job, owner, options.maxCommits ?? Infinity);
    } catch (err) {
      if (err instanceof LeaseLost) {
        log.warn('ingest lease lost to another worker');
        return 'yielded';
      }
      if (err instanceof ApiError) {
        // The upload was checked when it was accepted, so this is a fault of ours: stop with a reason.
        await finishJob(this.db, lease, { status: 'failed', error: err.message, now: this.now() });
        log.error({ err }, 'ingest job failed');
        return 'failed';
      }
      const delay = retryDelay(RETRY_AFTER_MS, job.attempts);
      log.error({ err, attempts: job.attempts }, 'ingest job interrupted; will retry');
      await releaseJob(this.db, lease, new Date(this.now() + delay).toISOString());
      return 'retry';
    }
  }

  private async process(job: IngestJobTable, owner: string, maxCommits: number): Promise<RunResult> {
    const reader = createRowReader(job.format as IngestFormat, {
      registry: this.opts.registry,
      now: this.now,
    });
    const state = { errorsStored: job.errors_stored, commits: 0 };
    let buffer: UploadRow[] = [];
    const flush = async (): Promise<void> => {
      if (buffer.length > 0) await this.commit(job, owner, buffer, state);
      buffer = [];
      // better-sqlite3 answers synchronously, so a chain of commits never leaves the microtask queue:
      // give timers and sockets a turn between commits, or HTTP stalls until the whole job is done.
      await new Promise((resolve) => setImmediate(resolve));
    };
    /** Buffers rows past the committed ones; true when the job should be handed back now. */
    const take = async (rows: UploadRow[]): Promise<boolean> => {
      for (const r of rows) {
        if (r.row <= job.processed_rows) continue; // committed before a crash or a hand-back
        buffer.push(r);
        if (buffer.length < this.rowsPerCommit) continue;
        await flush();
        if (this.loop.stopping || state.commits >= maxCommits) return true;
      }
      return false;
    };
    for (let seq = 0; ; seq++) {
      const text = await readChunk(this.db, job.id, seq);
      if (text === undefined) break;
      if (await take(reader.push(text))) return this.yieldJob(job, owner);
    }
    if (await take(reader.end())) return this.yieldJob(job, owner);
    await flush();
    if (!(await finishJob(this.db, { id: job.id, owner }, { status: 'completed', now: this.now() })))
      return 'yielded';
    this.opts.log.info({ ingestJob: job.id, rows: job.total_rows }, 'ingest job completed');
    return 'completed';
  }

  private async yieldJob(job: IngestJobTable, owner: string): Promise<RunResult> {
    await releaseJob(this.db, { id: job.id, owner }, null, true);
    return 'yielded';
  }

  /** One transaction: the rows' products, versions and events, their errors, and the job's progress. */
  private async commit(
    job: IngestJobTable,
    owner: string,
    rows: UploadRow[],
    state: { errorsStored: number; commits: number },
  ): Promise<void> {
    const ctx: WriteContext = {
      tenantId: job.tenant_id,
      actor: { type: job.actor_type as Actor['type'], id: job.actor_id },
      correlationId: job.correlation_id,
      env: this.opts.env,
      registry: this.opts.registry,
      now: this.now,
    };
    const prepared: PreparedItem[] = [];
    const failures: { row: number; error: ApiError }[] = [];
    for (const r of rows) {
      if ('error' in r) {
        failures.push({ row: r.row, error: r.error });
        continue;
      }
      const p = prepareCreate(r.value, ctx);
      if (!p.ok) {
        failures.push({ row: r.row, error: p.error });
        continue;
      }
      p.row.ingest_job_id = job.id;
      p.row.ingest_row = r.row;
      prepared.push({ index: r.row, row: p.row });
    }
    const last = rows[rows.length - 1]!.row;
    await this.db.transaction().execute(async (trx) => {
      const outcome = await insertPrepared(trx, ctx, prepared, { label: (row) => `row ${row}` });
      const all = [...failures, ...outcome.failed.map((f) => ({ row: f.index, error: f.error }))].sort(
        (a, b) => a.row - b.row,
      );
      const res = await commitProgress(
        trx,
        { id: job.id, owner, errorsStored: state.errorsStored },
        {
          processedRows: last,
          created: outcome.created.length,
          failed: all.length,
          errors: all.map(({ row, error }) => ({
            row,
            code: error.code ?? String(error.status),
            message: error.message,
            field: typeof error.details?.field === 'string' ? error.details.field : null,
          })),
        },
        { now: this.now(), leaseMs: this.leaseMs },
      );
      if (!res.ok) throw new LeaseLost('ingest_jobs', job.id);
      state.errorsStored = res.errorsStored;
    });
    state.commits++;
  }
}
