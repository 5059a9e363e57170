import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
import { sql } from 'kysely';
import type { Logger } from '../logging/logger.js';
import type { Db, OperationKey } from '../store/index.js';
import {
  applyOutcomes,
  planPrintEvents,
  queuePrintEvents,
  recordCommissioning,
  type OutcomeInput,
  type ReportMeta,
} from './outcomes.js';
import { isUniqueViolation } from '../store/index.js';

export interface PrintStatusDeps {
  db: Db;
  now: () => number;
}

export interface PrintStatusContext {
  tenantId: string;
  correlationId: string | null;
  log: Logger;
}

/** The 200 answer of POST /carriers/print-status. */
export interface PrintStatusAnswer {
  reportRef: string;
  updated: string[];
  unknown: string[];
  printed: string[];
  failed: string[];
  reportedAt: string;
  events: { type: string; dispatch: 'queued' | 'queue_failed'; chunks?: number }[];
}

/** The idempotency "route" under which derived batch keys are kept, apart from client keys. */
const DERIVED_ROUTE = 'POST /api/v2/carriers/print-status (derived from the batch)';

/** Rule 2: the key of a batch is SHA-256 over the tenant and the canonical JSON (RFC 8785) of its results. */
export function derivedBatchKey(tenantId: string, results: readonly OutcomeInput[]): string {
  return createHash('sha256').update(tenantId).update('\n').update(canonicalJson(results)).digest('hex');
}

/** The batch's own idempotency key (rule 2): the batch is also its request, so the hash is the key. */
export function batchKeyScope(tenantId: string, results: readonly OutcomeInput[]) {
  const key = derivedBatchKey(tenantId, results);
  return { tenantId, route: DERIVED_ROUTE, key, requestHash: key };
}

/** The answer of a report; `replayed` when it is the first answer to an identical batch. */
export interface PrintStatusOutcome {
  answer: PrintStatusAnswer;
  replayed: boolean;
}

/**
 * Runs `fn` inside a savepoint: a failure rolls back only what `fn` wrote, and is returned, not thrown
 * (rule 5: a failure to queue the events never fails the call; the outcomes still commit).
 */
async function inSavepoint(trx: Db, name: string, fn: () => Promise<void>): Promise<unknown> {
  await sql`savepoint ${sql.raw(name)}`.execute(trx);
  try {
    await fn();
  } catch (err) {
    await sql`rollback to savepoint ${sql.raw(name)}`.execute(trx);
    await sql`release savepoint ${sql.raw(name)}`.execute(trx);
    return err ?? new Error('unknown failure');
  }
  await sql`release savepoint ${sql.raw(name)}`.execute(trx);
  return undefined;
}

/**
 * POST /carriers/print-status (api-v2.md rules 1-5). In one transaction: the outcomes (wholesale, last
 * write wins), the EPCIS commissioning event of newly printed serials, then the print events inside a
 * savepoint, and the answer under the batch's derived key ({@link batchKeyScope}, kept by `batchKey`). An
 * identical batch within the idempotency window replays the first answer and queues nothing; a twin that
 * commits first wins and is replayed.
 */
export async function reportPrintStatus(
  deps: PrintStatusDeps,
  ctx: PrintStatusContext,
  results: readonly OutcomeInput[],
  batchKey: OperationKey<PrintStatusAnswer>,
): Promise<PrintStatusOutcome> {
  const earlier = await batchKey.earlier(deps.db);
  if (earlier) return { answer: earlier, replayed: true };
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const twin = await batchKey.earlier(trx);
      if (twin) return { answer: twin, replayed: true };
      const meta: ReportMeta = {
        tenantId: ctx.tenantId,
        reportRef: randomUUID(),
        source: 'print-status',
        at: new Date(deps.now()).toISOString(),
      };
      const { written, unknown } = await applyOutcomes(trx, meta, results);
      await recordCommissioning(trx, meta, written);

      const plans = planPrintEvents(meta, written);
      const failure = await inSavepoint(trx, 'print_events', () =>
        queuePrintEvents(trx, { ...meta, correlationId: ctx.correlationId }, plans),
      );
      if (failure) {
        ctx.log.warn({ err: failure, reportRef: meta.reportRef }, 'print events could not be queued');
      }
      const body: PrintStatusAnswer = {
        reportRef: meta.reportRef,
        updated: written.map((w) => w.serial),
        unknown,
        printed: written.filter((w) => w.status === 'printed').map((w) => w.serial),
        failed: written.filter((w) => w.status === 'failed').map((w) => w.serial),
        reportedAt: meta.at,
        events: plans.map((p) => ({
          type: p.type,
          dispatch: failure ? 'queue_failed' : 'queued',
          ...(p.chunks === undefined ? {} : { chunks: p.chunks }),
        })),
      };
      // An expired record of the same batch may still be stored: keeping the answer replaces it.
      await batchKey.keep(trx, body);
      return { answer: body, replayed: false };
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const twin = await batchKey.earlier(deps.db);
    if (twin) return { answer: twin, replayed: true };
    throw err;
  }
}
