import type { Actor } from '../http/index.js';
import type { Db } from '../store/index.js';
import { uuidv7 } from '../store/index.js';

export interface AuditEntry {
  tenantId: string | null;
  actor: Actor;
  action: string;
  resource?: { type: string; id: string };
  correlationId?: string | null;
  details?: Record<string, unknown>;
  at?: string;
}

/** Appends to the audit log; call it inside the transaction of the change it records. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: uuidv7(),
      tenant_id: entry.tenantId,
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      action: entry.action,
      resource_type: entry.resource?.type ?? null,
      resource_id: entry.resource?.id ?? null,
      correlation_id: entry.correlationId ?? null,
      details: entry.details ? JSON.stringify(entry.details) : null,
      occurred_at: entry.at ?? new Date().toISOString(),
    })
    .execute();
}
