import { randomUUID } from 'node:crypto';
import type { Db } from '../store/index.js';
import type { EpcisDocument } from './schemas.js';
import { recordEpcisEvents, type JsonLdContext } from './store.js';

/** A capture job (EPCIS 2.0 §12.5 capture interface). Ours finishes inside the request. */
export interface CaptureJob {
  captureID: string;
  createdAt: string;
  finishedAt: string;
  running: false;
  success: true;
  /** The whole document is stored or nothing is (EPCIS 2.0: `rollback`). */
  captureErrorBehaviour: 'rollback';
  errors: never[];
  eventCount: number;
  storedCount: number;
  /** Events whose eventID the tenant already had: capturing them again is a no-op. */
  duplicateCount: number;
}

function toJob(row: {
  id: string;
  created_at: string;
  finished_at: string;
  event_count: number;
  stored_count: number;
  duplicate_count: number;
}): CaptureJob {
  return {
    captureID: row.id,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    running: false,
    success: true,
    captureErrorBehaviour: 'rollback',
    errors: [],
    eventCount: row.event_count,
    storedCount: row.stored_count,
    duplicateCount: row.duplicate_count,
  };
}

/** Stores every event of a validated document for the tenant, in one transaction with its capture job. */
export async function captureDocument(
  db: Db,
  tenantId: string,
  document: EpcisDocument,
  ctx: { correlationId: string | null; now: () => number },
): Promise<CaptureJob> {
  const id = randomUUID();
  const createdAt = new Date(ctx.now()).toISOString();
  return db.transaction().execute(async (trx) => {
    const events = document.epcisBody.eventList;
    const result = await recordEpcisEvents(trx, tenantId, events, {
      source: 'capture',
      captureId: id,
      context: document['@context'] as JsonLdContext,
      recordTime: createdAt,
    });
    const row = {
      id,
      tenant_id: tenantId,
      event_count: events.length,
      stored_count: result.stored.length,
      duplicate_count: result.duplicates,
      correlation_id: ctx.correlationId,
      created_at: createdAt,
      finished_at: new Date(ctx.now()).toISOString(),
    };
    await trx.insertInto('epcis_captures').values(row).execute();
    return toJob(row);
  });
}

/** A capture job of the tenant, or undefined. */
export async function getCapture(db: Db, tenantId: string, id: string): Promise<CaptureJob | undefined> {
  const row = await db
    .selectFrom('epcis_captures')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}
