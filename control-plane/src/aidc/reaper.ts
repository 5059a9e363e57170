import { ATTEMPT_STATES, LABEL_MAY_BE_OUT } from '@dpp/shared';
import type { Logger } from '../logging/logger.js';
import type { Db } from '../store/index.js';
import type { PrintLoopPort } from './port.js';

/** Attempts the reaper may fail: their label was never sent, so claiming the job again prints it once. */
const BEFORE_SEND = ATTEMPT_STATES.filter((s) => !LABEL_MAY_BE_OUT.includes(s));

export interface ReaperDeps {
  db: Db;
  port: PrintLoopPort;
  log: Logger;
  now: () => number;
}

/**
 * One pass of the reaper: attempts whose lease expired before their device opened the send gate become
 * FAILED (`lease_expired`, re-claimable while retries remain); an attempt whose label may have left the
 * printer is left to its device or a person, never re-printed on the system's say (`labelMayBeOut`). Then
 * FAILED jobs whose retry budget is spent become DEAD_LETTER, which sets
 * metadata.print to failed and queues print.failed (so the serial lands in the re-print file). Every move
 * is a guarded statement, so several replicas may reap at once.
 */
export async function reapOnce(deps: ReaperDeps): Promise<{ expired: number; deadLettered: number }> {
  const iso = new Date(deps.now()).toISOString();
  const expired = await deps.db.transaction().execute(async (trx) => {
    const rows = await trx
      .updateTable('print_jobs')
      .set({ state: 'FAILED', last_error: 'lease_expired', lease_expires_at: null, updated_at: iso })
      .where('state', 'in', BEFORE_SEND)
      .where('sending_at', 'is', null)
      .where('lease_expires_at', '<=', iso)
      .returning(['job_ref', 'attempt_id'])
      .execute();
    for (const r of rows) {
      await trx
        .updateTable('print_attempts')
        .set({ ended_at: iso, failure_reason: 'lease_expired', state: 'FAILED' })
        .where('attempt_id', '=', r.attempt_id!)
        .where('ended_at', 'is', null)
        .execute();
    }
    return rows.length;
  });

  const exhausted = await deps.db
    .selectFrom('print_jobs')
    .select(['job_ref', 'tenant_id'])
    .where('state', '=', 'FAILED')
    .where((eb) => eb('attempt_count', '>=', eb.ref('max_attempts')))
    .orderBy('updated_at')
    .limit(500)
    .execute();
  let deadLettered = 0;
  for (const j of exhausted) {
    const moved = await deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('print_jobs')
        .set({ state: 'DEAD_LETTER', updated_at: iso, terminal_at: iso })
        .where('job_ref', '=', j.job_ref)
        .where('state', '=', 'FAILED')
        .where((eb) => eb('attempt_count', '>=', eb.ref('max_attempts')))
        .returningAll()
        .executeTakeFirst();
      if (!row) return false; // another replica got there first
      await deps.port.confirmFailed(trx, {
        tenantId: row.tenant_id,
        gtin: row.gtin,
        serial: row.serial,
        jobRef: row.job_ref,
        deviceId: row.device_id,
        at: iso,
        correlationId: row.correlation_id,
        reason: row.last_error ?? 'retry budget exhausted',
      });
      return true;
    });
    if (moved) deadLettered += 1;
  }
  if (expired || deadLettered) deps.log.info({ expired, deadLettered }, 'reaper pass');
  return { expired, deadLettered };
}

/** Runs the reaper every `intervalMs` until stopped. */
export function startReaper(deps: ReaperDeps, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(() => reapOnce(deps))
      .catch((err: unknown) => deps.log.error({ err }, 'reaper pass failed'));
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
