import { z } from 'zod';
import { WEBHOOK_API_VERSION, type WebhookEnvelope } from '@dpp/shared';
import type { Logger } from '../logging/logger.js';
import type { OutboxHandler } from '../outbox/index.js';
import type { Db } from '../store/index.js';
import { uuidv7 } from '../store/index.js';

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

/**
 * The outbox handler of topic `event`: one delivery per enabled endpoint of the event's tenant that
 * subscribes to its type and existed when the event occurred. The envelope is serialised here, once,
 * so every attempt sends the same bytes. Idempotent: a delivery is unique per (endpoint, event), so a
 * row handled twice (a crash after the insert, before the outbox row was marked) queues nothing new.
 */
export function webhookFanOut(deps: FanOutDeps): OutboxHandler {
  const now = deps.now ?? Date.now;
  return async (row) => {
    const parsed = EventPayloadSchema.safeParse(row.payload);
    if (!parsed.success || !row.tenantId) {
      // A malformed row never becomes well-formed; retrying it would only repeat this line.
      deps.log.error(
        { outboxId: row.id, issues: parsed.error?.issues },
        'event outbox row is malformed; skipped',
      );
      return;
    }
    const event = parsed.data;
    const occurredAt = new Date(event.occurredAt).toISOString();
    const endpoints = await deps.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'events'])
      .where('tenant_id', '=', row.tenantId)
      .where('enabled', '=', 1)
      .where('created_at', '<=', occurredAt)
      .execute();
    const targets = endpoints.filter((e) => (JSON.parse(e.events) as string[]).includes(event.type));
    if (targets.length === 0) return;

    const envelope: WebhookEnvelope = {
      id: event.eventId,
      type: event.type as WebhookEnvelope['type'],
      timestamp: event.occurredAt,
      apiVersion: WEBHOOK_API_VERSION,
      data: event.data,
    };
    const payload = JSON.stringify(envelope);
    const at = new Date(now()).toISOString();
    // One statement, so all of an event's deliveries are queued together or not at all.
    await deps.db
      .insertInto('webhook_deliveries')
      .values(
        targets.map((e) => ({
          id: uuidv7(),
          tenant_id: row.tenantId!,
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
        })),
      )
      .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
      .execute();
    deps.onQueued?.();
  };
}
