import { z } from 'zod';
import { WEBHOOK_API_VERSION, type WebhookEnvelope } from '@dpp/shared';
import type { Logger } from '../logging/logger.js';
import type { OutboxBatchHandler, OutboxRow } from '../outbox/index.js';
import type { Db, WebhookDeliveryTable } from '../store/index.js';
import { prepared, uuidv7 } from '../store/index.js';

/** What `recordEvent` writes into an `event` outbox row. */
const EventPayloadSchema = z.object({
  eventId: z.string().min(1),
  type: z.string().min(1),
  occurredAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO 8601 instant'),
  data: z.record(z.string(), z.unknown()),
});

export interface FanOutDeps {
  db: Db;
  log: Logger;
  now?: () => number;
  /** Called after deliveries were queued (wakes the delivery worker of this process). */
  onQueued?: () => void;
}

/** Deliveries queued by one INSERT (17 columns each, far below both dialects' parameter limits). */
const DELIVERY_INSERT_CHUNK = 500;

const enabledEndpoints = prepared((db: Db, tenantIds: readonly string[]) =>
  db
    .selectFrom('webhook_endpoints')
    .select(['id', 'tenant_id', 'events', 'created_at'])
    .where('tenant_id', 'in', tenantIds)
    .where('enabled', '=', 1),
);

/** Deliveries queued once per endpoint and event (a row there already is left as it is). */
const insertDeliveries = prepared((db: Db, rows: readonly WebhookDeliveryTable[]) =>
  db
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing()),
);

/**
 * The outbox handler of topic `event`: one delivery per enabled endpoint of the event's tenant that
 * subscribes to its type and existed when the event occurred. The envelope is serialised here, once,
 * so every attempt sends the same bytes. Idempotent: a delivery is unique per (endpoint, event), so a
 * row handled twice (a crash after the insert, before the outbox row was marked) queues nothing new.
 *
 * The rows of a dispatcher pass are handled together: one read of their tenants' endpoints, and their
 * deliveries in as few INSERTs as fit, each holding all of an event's deliveries (an event's deliveries are
 * queued together or not at all).
 */
export function webhookFanOut(deps: FanOutDeps): OutboxBatchHandler {
  const now = deps.now ?? Date.now;
  const many = async (rows: readonly OutboxRow[]): Promise<void> => {
    const events: { tenantId: string; event: z.infer<typeof EventPayloadSchema> }[] = [];
    for (const row of rows) {
      const parsed = EventPayloadSchema.safeParse(row.payload);
      if (!parsed.success || !row.tenantId) {
        // A malformed row never becomes well-formed; retrying it would only repeat this line.
        deps.log.error(
          { outboxId: row.id, issues: parsed.error?.issues },
          'event outbox row is malformed; skipped',
        );
        continue;
      }
      events.push({ tenantId: row.tenantId, event: parsed.data });
    }
    if (events.length === 0) return;
    const { rows: endpoints } = await deps.db.executeQuery(
      enabledEndpoints(deps.db, [...new Set(events.map((e) => e.tenantId))]),
    );
    const subscribed = endpoints.map((e) => ({ ...e, types: new Set(JSON.parse(e.events) as string[]) }));

    const at = new Date(now()).toISOString();
    const perEvent = events.map(({ tenantId, event }) => {
      const occurredAt = new Date(event.occurredAt).toISOString();
      const targets = subscribed.filter(
        (e) => e.tenant_id === tenantId && e.created_at <= occurredAt && e.types.has(event.type),
      );
      if (targets.length === 0) return [];
      const envelope: WebhookEnvelope = {
        id: event.eventId,
        type: event.type as WebhookEnvelope['type'],
        timestamp: event.occurredAt,
        apiVersion: WEBHOOK_API_VERSION,
        data: event.data,
      };
      const payload = JSON.stringify(envelope);
      return targets.map((e) => ({
        id: uuidv7(),
        tenant_id: tenantId,
        endpoint_id: e.id,
        event_id: event.eventId,
        event_type: event.type,
        payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: at,
        locked_until: null,
        claim_token: null,
        next_trigger: 'schedule',
        last_status_code: null,
        last_error: null,
        created_at: at,
        updated_at: at,
        completed_at: null,
      }));
    });
    let chunk: (typeof perEvent)[number] = [];
    const insert = async () => {
      if (chunk.length === 0) return;
      await deps.db.executeQuery(insertDeliveries(deps.db, chunk));
      chunk = [];
    };
    for (const deliveries of perEvent) {
      if (chunk.length > 0 && chunk.length + deliveries.length > DELIVERY_INSERT_CHUNK) await insert();
      chunk.push(...deliveries);
    }
    const queued = perEvent.some((d) => d.length > 0);
    await insert();
    if (queued) deps.onQueued?.();
  };
  return { one: (row) => many([row]), many };
}
