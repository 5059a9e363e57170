/**
 * The durable result outbox. Every result the pipeline reports is first a row in SQLite with its
 * Idempotency-Key, then delivered by this loop:
 *
 * - strictly in order per job: only the oldest pending row of a job is ever in flight;
 * - the heads of several jobs that are due together go in one call (POST /aidc/jobs/results) when the
 *   sender can, each with the answer its own call would have had;
 * - with the same Idempotency-Key on every try, so a result whose answer was lost replays on the control
 *   plane instead of moving the job twice;
 * - with backoff while the control plane is unreachable (network, timeout, 5xx, 429), and a pause of
 *   every job when the network itself fails; rows wait across restarts (the file is the queue);
 * - final answers (409 STALE_ATTEMPT, 410 ENVELOPE_EXPIRED, 409 INVALID_TRANSITION, 422, 400, 403, 404) are
 *   recorded on the row, never retried, and settle whoever waits for it.
 */
import { MAX_RESULTS_PER_CALL, type ResultState, TypedEvents, uuidv7 } from '@dpp/shared';
import type { BatchAnswer, BatchedResultBody, ResultBody } from '../api/index.js';
import { isTransient } from '../api/index.js';
import { AgentError, toAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AgentDatabase } from '../store/index.js';
import { WakeableSleep, backoffMs, deferred, type Deferred } from '../util/time.js';
import {
  countByState,
  getRow,
  insertRow,
  markDelivered,
  markRejected,
  markRetry,
  pendingHeads,
  pruneSettled,
  rowsOfJob,
  type OutboxRow,
  type OutboxState,
} from './rows.js';

/** Whoever takes results (the control plane client). */
export interface ResultSender {
  reportResult(jobRef: string, body: ResultBody, idempotencyKey: string): Promise<unknown>;
  /**
   * Whether the job already shows this result of this attempt. Asked after a 409 INVALID_TRANSITION, which a
   * retry gets when its twin (same key, answer lost) is still committing instead of a replay.
   */
  alreadyApplied?(jobRef: string, body: ResultBody): Promise<boolean>;
  /**
   * Several results in one call (docs/device-protocol.md, "Batches"), in order: for each, taken, or the error
   * its own `reportResult` would have thrown. Throws when the call as a whole was not taken.
   */
  reportResults?(results: readonly BatchedResultBody[]): Promise<BatchAnswer[]>;
}

export interface Settlement {
  id: number;
  state: Exclude<OutboxState, 'pending'>;
  /** Why it was refused (`STALE_ATTEMPT`, `ENVELOPE_EXPIRED`, ...), for rejected and skipped rows. */
  code: string | null;
  httpStatus: number | null;
  message: string | null;
}

export type OutboxEvents = {
  delivered: [row: OutboxRow];
  rejected: [row: OutboxRow];
  /** The control plane could not be reached; `retryInMs` until the next try. */
  unreachable: [info: { error: string; retryInMs: number }];
  reachable: [];
  changed: [];
};

export interface OutboxOptions {
  db: AgentDatabase;
  sender: ResultSender;
  log: Logger;
  now?: () => number;
  /** First retry delay; doubles per try up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Rows in flight at once (each from a different job). */
  concurrency?: number;
  /** Settled rows kept. */
  keepSettled?: number;
}

export interface EnqueueInput {
  jobRef: string;
  attemptId: string;
  status: ResultState;
  evidence: Record<string, unknown>;
}

export class Outbox {
  readonly events: TypedEvents<OutboxEvents>;
  private readonly waiters = new Map<number, Deferred<Settlement>[]>();
  private readonly now: () => number;
  private readonly idle = new WakeableSleep();
  private loop: Promise<void> | null = null;
  private stopping = false;
  private pauseUntil = 0;
  private networkFailures = 0;
  private reachable = true;
  private deliveries = 0;

  constructor(private readonly opts: OutboxOptions) {
    this.now = opts.now ?? Date.now;
    this.events = new TypedEvents<OutboxEvents>((event, err) =>
      opts.log.error({ event, err }, 'outbox listener failed'),
    );
  }

  /** Accepts a result: committed to disk before this returns. */
  enqueue(input: EnqueueInput): OutboxRow {
    const body: ResultBody = { status: input.status, evidence: input.evidence, attempt_id: input.attemptId };
    const row = insertRow(this.opts.db, {
      job_ref: input.jobRef,
      attempt_id: input.attemptId,
      status: input.status,
      body: JSON.stringify(body),
      // Time-ordered: the control plane's key index takes each new key at its right edge, not on a random page.
      idempotency_key: uuidv7(),
      created_at: new Date(this.now()).toISOString(),
    });
    this.opts.log.debug(
      { jobRef: input.jobRef, attemptId: input.attemptId, status: input.status, id: row.id },
      'result queued',
    );
    this.events.emit('changed');
    this.wake();
    return row;
  }

  /** Resolves once the row is delivered, rejected or skipped (immediately if it already is). */
  settled(id: number): Promise<Settlement> {
    const row = getRow(this.opts.db, id);
    if (!row) return Promise.reject(new AgentError('INTERNAL', `no outbox row ${id}`));
    if (row.state !== 'pending') return Promise.resolve(settlementOf(row));
    const d = deferred<Settlement>();
    const list = this.waiters.get(id) ?? [];
    list.push(d);
    this.waiters.set(id, list);
    return d.promise;
  }

  counts(): Record<OutboxState, number> {
    return countByState(this.opts.db);
  }

  rowsOf(jobRef: string): OutboxRow[] {
    return rowsOfJob(this.opts.db, jobRef);
  }

  /** The row of one result of one attempt (`SEALED` of attempt A), in whatever state; undefined if never queued. */
  resultOf(jobRef: string, attemptId: string, status: ResultState): OutboxRow | undefined {
    return this.rowsOf(jobRef).find((r) => r.attempt_id === attemptId && r.status === status);
  }

  /** Whether the last delivery try reached the control plane. */
  get controlPlaneReachable(): boolean {
    return this.reachable;
  }

  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run().catch((err: unknown) => this.opts.log.error({ err }, 'outbox loop died'));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
    this.loop = null;
  }

  wake(): void {
    this.idle.wake();
  }

  /** The control plane answered something else (a claim): try every waiting row now, not after its backoff. */
  retryNow(): void {
    if (this.reachable) return;
    this.pauseUntil = 0;
    this.networkFailures = 0;
    this.opts.db.prepare("update outbox set next_try_at = 0 where state = 'pending'").run();
    this.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const now = this.now();
      const heads = pendingHeads(this.opts.db);
      const due = heads.filter((h) => h.next_try_at <= now && this.pauseUntil <= now);
      if (due.length === 0) {
        const next = heads.reduce((m, h) => Math.min(m, Math.max(h.next_try_at, this.pauseUntil)), Infinity);
        await this.idle.sleep(next === Infinity ? 60_000 : Math.max(1, next - now));
        continue;
      }
      if (this.opts.sender.reportResults && due.length > 1) {
        await this.deliverTogether(due.slice(0, MAX_RESULTS_PER_CALL));
      } else {
        await Promise.all(due.slice(0, this.opts.concurrency ?? 8).map((row) => this.deliver(row)));
      }
      if (++this.deliveries % 200 === 0) pruneSettled(this.opts.db, this.opts.keepSettled ?? 5000);
    }
  }

  /** One row in its own call (POST /aidc/jobs/{ref}/result). */
  private async deliver(row: OutboxRow): Promise<void> {
    try {
      await this.opts.sender.reportResult(
        row.job_ref,
        JSON.parse(row.body) as ResultBody,
        row.idempotency_key,
      );
      await this.answered(row, null);
    } catch (caught) {
      await this.answered(row, caught);
    }
  }

  /**
   * Rows of different jobs in one call (POST /aidc/jobs/results): each gets the answer its own call would
   * have had. A call not taken as a whole waits and is tried again like one row; a refusal of the call
   * itself (not of a result in it) sends each row alone, so each gets its own final answer.
   */
  private async deliverTogether(rows: readonly OutboxRow[]): Promise<void> {
    const sender = this.opts.sender;
    let answers: BatchAnswer[];
    try {
      answers = await sender.reportResults!(
        rows.map((r) => ({
          jobRef: r.job_ref,
          body: JSON.parse(r.body) as ResultBody,
          idempotencyKey: r.idempotency_key,
        })),
      );
    } catch (caught) {
      const err = toAgentError(caught);
      if (isRetryable(err)) {
        for (const row of rows) await this.answered(row, err);
      } else {
        await Promise.all(rows.slice(0, this.opts.concurrency ?? 8).map((row) => this.deliver(row)));
      }
      return;
    }
    for (const [i, row] of rows.entries()) {
      const answer = answers[i]!;
      await this.answered(row, answer.ok ? null : answer.error);
    }
  }

  /** Records what the control plane answered a row (`caught` null: taken) and settles or schedules it. */
  private async answered(row: OutboxRow, caught: unknown): Promise<void> {
    const log = this.opts.log.child({ jobRef: row.job_ref, attemptId: row.attempt_id, status: row.status });
    const at = () => new Date(this.now()).toISOString();
    if (caught === null) {
      this.noteReachable();
      markDelivered(this.opts.db, row.id, 200, at());
      log.info({ tries: row.tries + 1 }, 'result delivered');
      this.settle(row.id, 'delivered');
      return;
    }
    const err = toAgentError(caught);
    if (err.code === 'BAD_RESPONSE' && err.status === 200) {
      // The control plane took it (200); only its answer was odd.
      this.noteReachable();
      markDelivered(this.opts.db, row.id, 200, at());
      this.settle(row.id, 'delivered');
      return;
    }
    if (isRetryable(err)) {
      const network = err.code === 'NETWORK' || err.code === 'TIMEOUT';
      const cap = this.opts.maxBackoffMs ?? 30_000;
      const base = this.opts.baseBackoffMs ?? 500;
      const wait = err.status === 401 || err.code === 'TOKEN_FAILED' ? cap : backoffMs(row.tries, base, cap);
      if (network) {
        this.pauseUntil = this.now() + backoffMs(this.networkFailures++, base, cap);
        if (this.reachable) {
          this.reachable = false;
          this.events.emit('unreachable', { error: err.message, retryInMs: wait });
        }
      }
      markRetry(this.opts.db, row.id, this.now() + wait, err.apiCode ?? err.code, err.message);
      log.warn(
        { err: err.toJSON(), retryInMs: wait, tries: row.tries + 1 },
        'result not delivered; will retry',
      );
      this.events.emit('changed');
      return;
    }
    this.noteReachable();
    if (err.apiCode === 'INVALID_TRANSITION' && row.tries > 0 && (await this.appliedBefore(row))) {
      markDelivered(this.opts.db, row.id, 200, at());
      log.info({ tries: row.tries + 1 }, 'result found applied by an earlier try');
      this.settle(row.id, 'delivered');
      return;
    }
    const code = err.apiCode ?? err.code;
    const skipped = markRejected(this.opts.db, row, {
      httpStatus: err.status ?? null,
      code,
      message: err.message,
      at: at(),
    });
    log.warn({ code, httpStatus: err.status, skipped }, 'result refused by the control plane (final)');
    this.settle(row.id, 'rejected');
    for (const id of skipped) this.settle(id, 'skipped');
  }

  private async appliedBefore(row: OutboxRow): Promise<boolean> {
    try {
      return (
        (await this.opts.sender.alreadyApplied?.(row.job_ref, JSON.parse(row.body) as ResultBody)) ?? false
      );
    } catch {
      return false;
    }
  }

  private noteReachable(): void {
    this.networkFailures = 0;
    this.pauseUntil = 0;
    if (!this.reachable) {
      this.reachable = true;
      this.events.emit('reachable');
    }
  }

  private settle(id: number, state: 'delivered' | 'rejected' | 'skipped'): void {
    const row = getRow(this.opts.db, id);
    if (row) this.events.emit(state === 'delivered' ? 'delivered' : 'rejected', row);
    this.events.emit('changed');
    const list = this.waiters.get(id);
    if (!list || !row) return;
    this.waiters.delete(id);
    for (const d of list) d.resolve(settlementOf(row));
  }
}

/** Worth another try with the same key: no answer, a 5xx or 429, or a refused credential. */
function isRetryable(err: AgentError): boolean {
  if (isTransient(err)) return true;
  if (err.code === 'TOKEN_FAILED') return true; // revoked or unknown: kept, never lost; an operator decides
  if (err.code === 'HTTP' && err.status === 401) return true;
  return !(err.code === 'HTTP' || err.code === 'BAD_RESPONSE');
}

function settlementOf(row: OutboxRow): Settlement {
  return {
    id: row.id,
    state: row.state as Settlement['state'],
    code: row.error_code,
    httpStatus: row.http_status,
    message: row.error_message,
  };
}
