import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
import { sql } from 'kysely';
import { findIdempotentReply, storeIdempotentReply, type IdempotencyScope } from '../http/idempotency.js';
import type { JsonReply } from '../http/route.js';
import type { Logger } from '../logging/logger.js';
import type { Db } from '../store/index.js';
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
  /** How long a batch is remembered for its derived idempotency (the Idempotency-Key window). */
  idempotencyTtlHours: number;
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

const replayed = (reply: JsonReply): JsonReply => ({ ...reply, headers: { 'Idempotent-Replayed': 'true' } });

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
 * savepoint, and the answer under the batch's derived key. An identical batch within the idempotency
 * window replays the first answer and queues nothing; a twin that commits first wins and is replayed.
 */
export async function reportPrintStatus(
  deps: PrintStatusDeps,
  ctx: PrintStatusContext,
  results: readonly OutcomeInput[],
): Promise<JsonReply> {
  const key = derivedBatchKey(ctx.tenantId, results);
  const claim: IdempotencyScope = { tenantId: ctx.tenantId, route: DERIVED_ROUTE, key, requestHash: key };
  const earlier = await findIdempotentReply(deps.db, claim, deps.now);
  if (earlier) return replayed(earlier);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const twin = await findIdempotentReply(trx, claim, deps.now);
      if (twin) return replayed(twin);
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
      const reply: JsonReply = { status: 200, body };
      // An expired record of the same batch may still be stored: it no longer counts.
      await trx
        .deleteFrom('idempotency_keys')
        .where('tenant_id', '=', claim.tenantId)
        .where('route', '=', claim.route)
        .where('key', '=', claim.key)
        .where('expires_at', '<=', new Date(deps.now()).toISOString())
        .execute();
      await storeIdempotentReply(trx, claim, reply, deps.idempotencyTtlHours, deps.now);
      return reply;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const twin = await findIdempotentReply(deps.db, claim, deps.now);
    if (twin) return replayed(twin);
    throw err;
  }
}
