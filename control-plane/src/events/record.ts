import type { EventType } from '@dpp/shared';
import { enqueueOutbox } from '../outbox/index.js';
import type { Db } from '../store/index.js';
import { uuidv7 } from '../store/index.js';

export interface DomainEvent {
  tenantId: string;
  type: EventType;
  resource?: { type: string; id: string };
  data: Record<string, unknown>;
  correlationId?: string | null;
  occurredAt?: string;
}

/**
 * Records a domain event (readable later, e.g. GET /products/{id}/events) and queues its delivery
 * through the outbox, both in the caller's transaction. Returns the event id, which webhook envelopes
 * carry as `id`.
 */
export async function recordEvent(db: Db, event: DomainEvent): Promise<string> {
  const id = uuidv7();
  const occurredAt = event.occurredAt ?? new Date().toISOString();
  await db
    .insertInto('events')
    .values({
      id,
      tenant_id: event.tenantId,
      type: event.type,
      resource_type: event.resource?.type ?? null,
      resource_id: event.resource?.id ?? null,
      data: JSON.stringify(event.data),
      correlation_id: event.correlationId ?? null,
      occurred_at: occurredAt,
    })
    .execute();
  await enqueueOutbox(db, {
    topic: 'event',
    tenantId: event.tenantId,
    payload: { eventId: id, type: event.type, occurredAt, data: event.data },
  });
  return id;
}
