import type { Actor } from '../http/index.js';
import type { Db } from '../store/index.js';
import { type AuditLogTable, WriteSet, prepared, uuidv7 } from '../store/index.js';

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
  await recordAudits(db, [entry]);
}

/** Rows per multi-row INSERT: 10 columns x 200 stays far below both dialects' parameter limits. */
const AUDIT_INSERT_CHUNK = 200;

/** Appends several entries in order, in as few statements as the dialects' parameter limits allow. */
export async function recordAudits(db: Db, entries: readonly AuditEntry[]): Promise<void> {
  const writes = new WriteSet();
  addAudits(writes, db, entries);
  await writes.flush(db);
}

const insertAudits = prepared((db: Db, rows: readonly AuditLogTable[]) =>
  db.insertInto('audit_log').values(rows),
);

/** Adds the INSERTs of these entries to a write set of the caller's transaction `db`. */
export function addAudits(writes: WriteSet, db: Db, entries: readonly AuditEntry[]): void {
  const rows = entries.map((entry) => ({
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
  }));
  for (let i = 0; i < rows.length; i += AUDIT_INSERT_CHUNK) {
    writes.add(insertAudits(db, rows.slice(i, i + AUDIT_INSERT_CHUNK)));
  }
}
