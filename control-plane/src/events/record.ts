import type { EventType } from '@dpp/shared';
import { enqueueOutboxMessages } from '../outbox/index.js';
import type { Db, EventTable, WriteSet } from '../store/index.js';
import { prepared, uuidv7 } from '../store/index.js';

const insertEventRows = prepared((db: Db, rows: readonly EventTable[]) =>
  db.insertInto('events').values(rows),
);

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
  const [id] = await recordEvents(db, [event]);
  return id!;
}

/** Rows per multi-row INSERT: 8 columns x 200 stays far below both dialects' parameter limits. */
const EVENT_INSERT_CHUNK = 200;

/**
 * Records several events as {@link recordEvent} records one, in order: one INSERT of events, one of outbox
 * rows; added to `writes` (a write set of the caller's transaction `db`) instead of run when it is given.
 */
export async function recordEvents(
  db: Db,
  events: readonly DomainEvent[],
  writes?: WriteSet,
): Promise<string[]> {
  const rows = events.map((event) => ({
    id: uuidv7(),
    tenant_id: event.tenantId,
    type: event.type,
    resource_type: event.resource?.type ?? null,
    resource_id: event.resource?.id ?? null,
    data: JSON.stringify(event.data),
    correlation_id: event.correlationId ?? null,
    occurred_at: event.occurredAt ?? new Date().toISOString(),
  }));
  for (let i = 0; i < rows.length; i += EVENT_INSERT_CHUNK) {
    const insert = insertEventRows(db, rows.slice(i, i + EVENT_INSERT_CHUNK));
    if (writes) writes.add(insert);
    else await db.executeQuery(insert);
  }
  await enqueueOutboxMessages(
    db,
    events.map((event, i) => ({
      topic: 'event',
      tenantId: event.tenantId,
      payload: { eventId: rows[i]!.id, type: event.type, occurredAt: rows[i]!.occurred_at, data: event.data },
    })),
    writes,
  );
  return rows.map((r) => r.id);
}
