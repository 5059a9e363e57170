import { recordAudit } from '../audit/index.js';
import type { Db } from '../store/index.js';
import { uuidv7 } from '../store/index.js';
import type { ClaimedDelivery } from './claim.js';
import type { SendResult } from './sender.js';

export interface AttemptOutcome {
  delivery: ClaimedDelivery;
  /** The endpoint's failure window as read before the attempt. */
  endpointFailingSince: string | null;
  result: SendResult;
  attemptedAt: string;
  /** delivered, pending (another attempt at nextAttemptAt) or failed (no more automatic attempts). */
  status: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: string | null;
  /** An endpoint failing since at or before this instant is disabled by this attempt's failure. */
  disableIfFailingSince: string;
}

export interface RecordedAttempt {
  /** False when the claim was lost (the endpoint was deleted, or the claim expired and was taken). */
  recorded: boolean;
  endpointDisabled: boolean;
}

/**
 * Records one attempt in one transaction: the delivery's transition (guarded by the claim token), the
 * attempt row, and the endpoint's health. A 2xx ends the endpoint's failure window; a failure opens it
 * if it was closed, and disables the endpoint once it has stayed open long enough, with an audit entry.
 */
export async function recordAttempt(db: Db, outcome: AttemptOutcome): Promise<RecordedAttempt> {
  const { delivery, result, attemptedAt } = outcome;
  return db.transaction().execute(async (trx) => {
    const done = outcome.status !== 'pending';
    const moved = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        attempts: delivery.attempts + 1,
        next_attempt_at: outcome.nextAttemptAt,
        locked_until: null,
        claim_token: null,
        next_trigger: 'schedule',
        last_status_code: result.statusCode,
        last_error: result.error,
        updated_at: attemptedAt,
        completed_at: done ? attemptedAt : null,
      })
      .where('id', '=', delivery.id)
      .where('claim_token', '=', delivery.token)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return { recorded: false, endpointDisabled: false };

    await trx
      .insertInto('webhook_delivery_attempts')
      .values({
        id: uuidv7(),
        delivery_id: delivery.id,
        tenant_id: delivery.tenantId,
        attempt: delivery.attempts + 1,
        attempted_at: attemptedAt,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: result.durationMs,
        trigger: delivery.trigger,
      })
      .execute();

    if (outcome.status === 'delivered') {
      if (outcome.endpointFailingSince !== null) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('id', '=', delivery.endpointId)
          .execute();
      }
      return { recorded: true, endpointDisabled: false };
    }

    await trx
      .updateTable('webhook_endpoints')
      .set({ failing_since: attemptedAt })
      .where('id', '=', delivery.endpointId)
      .where('failing_since', 'is', null)
      .execute();
    const disabled = await trx
      .updateTable('webhook_endpoints')
      .set({
        enabled: 0,
        disabled_reason: 'failing_deliveries',
        disabled_at: attemptedAt,
        updated_at: attemptedAt,
      })
      .where('id', '=', delivery.endpointId)
      .where('enabled', '=', 1)
      .where('failing_since', '<=', outcome.disableIfFailingSince)
      .returning(['failing_since'])
      .executeTakeFirst();
    if (disabled) {
      await recordAudit(trx, {
        tenantId: delivery.tenantId,
        actor: { type: 'system', id: 'webhook-delivery-worker' },
        action: 'webhook_endpoint.disabled',
        resource: { type: 'webhook_endpoint', id: delivery.endpointId },
        details: {
          reason: 'failing_deliveries',
          failingSince: disabled.failing_since,
          lastDeliveryId: delivery.id,
          lastStatusCode: result.statusCode,
          lastError: result.error,
        },
        at: attemptedAt,
      });
    }
    return { recorded: true, endpointDisabled: disabled !== undefined };
  });
}
