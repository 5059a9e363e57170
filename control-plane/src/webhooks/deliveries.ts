import { recordAudit } from '../audit/index.js';
import { ApiError, type Page, decodeCursor, encodeCursor, toPage } from '../http/index.js';
import type { Db, WebhookDeliveryAttemptTable, WebhookDeliveryTable } from '../store/index.js';
import { type AuditContext, findEndpoint } from './endpoints.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryAttemptView {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  trigger: 'schedule' | 'manual';
}

export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  attempts: DeliveryAttemptView[];
}

export interface DeliveryFilter {
  endpointId?: string | undefined;
  eventType?: string | undefined;
  eventId?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Deliveries queued at or after this instant (ISO 8601). */
  since?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

function attemptView(row: WebhookDeliveryAttemptTable): DeliveryAttemptView {
  return {
    attempt: row.attempt,
    at: row.attempted_at,
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
    trigger: row.trigger === 'manual' ? 'manual' : 'schedule',
  };
}

function deliveryView(row: WebhookDeliveryTable, attempts: DeliveryAttemptView[]): DeliveryView {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliveryStatus,
    attemptCount: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    attempts,
  };
}

async function attemptsOf(
  db: Db,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryAttemptView[]>> {
  const byDelivery = new Map<string, DeliveryAttemptView[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(attemptView(row));
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}

/** GET /webhooks/deliveries: newest first, filtered, each delivery with every attempt. */
export async function listDeliveries(
  db: Db,
  tenantId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryView>> {
  const after = filter.cursor ? decodeCursor(filter.cursor, 'createdAt') : undefined;
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .$if(filter.endpointId !== undefined, (q) => q.where('endpoint_id', '=', filter.endpointId!))
    .$if(filter.eventType !== undefined, (q) => q.where('event_type', '=', filter.eventType!))
    .$if(filter.eventId !== undefined, (q) => q.where('event_id', '=', filter.eventId!))
    .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status!))
    .$if(filter.since !== undefined, (q) => q.where('created_at', '>=', filter.since!))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb('created_at', '<', String(after!.value)),
          eb.and([eb('created_at', '=', String(after!.value)), eb('id', '<', after!.id)]),
        ]),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  const attempts = await attemptsOf(
    db,
    rows.slice(0, filter.limit).map((r) => r.id),
  );
  return toPage(
    rows,
    filter.limit,
    (row) => deliveryView(row, attempts.get(row.id) ?? []),
    (row) => encodeCursor('createdAt', row.created_at, row.id),
  );
}

export async function getDelivery(
  db: Db,
  tenantId: string,
  endpointId: string,
  id: string,
): Promise<DeliveryView> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw ApiError.notFound('Webhook delivery');
  return deliveryView(row, (await attemptsOf(db, [id])).get(id) ?? []);
}

/**
 * Queues one more attempt of a delivery, now, under the same delivery id: a failed one (for example
 * refused with the old secret after a rotation), a delivered one (a receiver that lost it), or a
 * pending one (brought forward). Refused with 409 while an attempt is in flight or while the endpoint
 * is disabled (re-enable it first, and its held deliveries resume by themselves).
 */
export async function retryDelivery(
  db: Db,
  tenantId: string,
  endpointId: string,
  deliveryId: string,
  audit: AuditContext,
  now: () => number = Date.now,
): Promise<DeliveryView> {
  const at = new Date(now()).toISOString();
  return db.transaction().execute(async (trx) => {
    const endpoint = await findEndpoint(trx, tenantId, endpointId);
    const before = await getDelivery(trx, tenantId, endpointId, deliveryId);
    if (endpoint.enabled !== 1) {
      throw ApiError.plain(409, 'The webhook endpoint is disabled; re-enable it to retry its deliveries', {
        details: { endpointId, disabledReason: endpoint.disabled_reason },
      });
    }
    const res = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        next_attempt_at: at,
        next_trigger: 'manual',
        locked_until: null,
        claim_token: null,
        completed_at: null,
        updated_at: at,
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', deliveryId)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', at)]))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.plain(409, 'An attempt of this delivery is in progress; retry when it has finished', {
        details: { deliveryId },
      });
    }
    await recordAudit(trx, {
      tenantId,
      actor: audit.actor,
      action: 'webhook_delivery.retry_requested',
      resource: { type: 'webhook_delivery', id: deliveryId },
      correlationId: audit.correlationId,
      details: { endpointId, previousStatus: before.status },
      at,
    });
    return getDelivery(trx, tenantId, endpointId, deliveryId);
  });
}
