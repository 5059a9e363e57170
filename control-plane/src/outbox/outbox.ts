import type { Db, OutboxTable, WriteSet } from '../store/index.js';
import { prepared, uuidv7 } from '../store/index.js';

const insertOutboxRows = prepared((db: Db, rows: readonly OutboxTable[]) =>
  db.insertInto('outbox').values(rows),
);

/**
 * Outbox topics: what kind of side effect a row asks for. Each topic has one handler in the dispatcher
 * (webhook fan-out, MQTT notices, ...). Declared here so writers and handlers share one list.
 */
export const OUTBOX_TOPICS = ['event'] as const;
export type OutboxTopic = (typeof OUTBOX_TOPICS)[number] | (string & { readonly __topic?: never });

export interface OutboxMessage {
  topic: OutboxTopic;
  tenantId: string | null;
  payload: unknown;
  /** Not before this instant (ISO); defaults to now. */
  availableAt?: string;
}

let rowsWritten = 0;

/**
 * How many outbox rows this process has written (committed or not). The dispatcher compares it with the
 * count at its last pass, so a write request that queued no side effect costs no extra pass.
 */
export function outboxRowsWritten(): number {
  return rowsWritten;
}

/**
 * Writes a side effect as an outbox row. Call it inside the transaction of the state change, so a
 * crash can delay the effect but never lose it, and a rolled-back change never emits it.
 */
export async function enqueueOutbox(db: Db, message: OutboxMessage): Promise<string> {
  const [id] = await enqueueOutboxMessages(db, [message]);
  return id!;
}

/** Rows per multi-row INSERT: 10 columns x 200 stays far below both dialects' parameter limits. */
const OUTBOX_INSERT_CHUNK = 200;

/**
 * Writes several side effects as {@link enqueueOutbox} writes one, in order, with one INSERT for all; added
 * to `writes` (a write set of the caller's transaction `db`) instead of run when it is given.
 */
export async function enqueueOutboxMessages(
  db: Db,
  messages: readonly OutboxMessage[],
  writes?: WriteSet,
): Promise<string[]> {
  const now = new Date().toISOString();
  const rows = messages.map((message) => ({
    id: uuidv7(),
    tenant_id: message.tenantId,
    topic: message.topic,
    payload: JSON.stringify(message.payload),
    created_at: now,
    available_at: message.availableAt ?? now,
    attempts: 0,
    locked_until: null,
    last_error: null,
    processed_at: null,
  }));
  for (let i = 0; i < rows.length; i += OUTBOX_INSERT_CHUNK) {
    const insert = insertOutboxRows(db, rows.slice(i, i + OUTBOX_INSERT_CHUNK));
    if (writes) writes.add(insert);
    else await db.executeQuery(insert);
  }
  rowsWritten += rows.length;
  return rows.map((r) => r.id);
}
