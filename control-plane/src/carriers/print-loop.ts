import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, isValidGtin, labelProofPath, normalizeGtin } from '@dpp/shared';
import type { AllocatedSerial, CommissioningRef, PrintLoopPort, PrintOutcome } from '../aidc/port.js';
import { markProductInPrintLoop } from '../products/index.js';
import type { Db } from '../store/index.js';
import { labelCodes } from './codes.js';
import type { PrintStatus } from './model.js';
import {
  applyOutcomes,
  planPrintEvents,
  queuePrintEvents,
  recordCommissioning,
  type ReportMeta,
} from './outcomes.js';

/** An allocated serial of the tenant under this GTIN, with what its label needs; null when there is none. */
export async function findAllocatedSerial(
  db: Db,
  publicBaseUrl: string,
  tenantId: string,
  gtin: string,
  serial: string,
): Promise<AllocatedSerial | null> {
  if (!isValidGtin(gtin)) return null;
  const row = await db
    .selectFrom('carrier_serials as s')
    .innerJoin('products as p', 'p.id', 's.product_id')
    .select(['s.product_id', 's.gtin', 's.serial', 'p.name', 'p.company_prefix_length'])
    .where('s.tenant_id', '=', tenantId)
    .where('s.serial', '=', serial)
    .where('s.gtin', '=', normalizeGtin(gtin))
    .executeTakeFirst();
  if (!row) return null;
  const codes = labelCodes(publicBaseUrl, row.gtin, row.company_prefix_length);
  return {
    productId: row.product_id,
    productName: row.name,
    gtin: row.gtin,
    serial: row.serial,
    digitalLink: codes.digitalLink(row.serial),
    sgtin96Epc: codes.sgtin96(row.serial),
  };
}

/**
 * The terminal outcome of a print job, written exactly as a print-status report of one serial: the
 * outcome, the EPCIS commissioning event when it became printed, and its event (source `aidc`, with the
 * jobRef), all in the caller's transaction. Unlike print-status, a failure to queue the event fails the
 * transition: the job's terminal state, metadata.print and the event commit together (DESIGN.md).
 */
async function confirmOutcome(
  db: Db,
  outcome: PrintOutcome,
  status: PrintStatus,
  reason: string | null,
  publicBaseUrl: string,
): Promise<CommissioningRef | null> {
  const meta: ReportMeta = {
    tenantId: outcome.tenantId,
    reportRef: randomUUID(),
    source: 'aidc',
    at: outcome.at,
  };
  const { written, unknown } = await applyOutcomes(db, meta, [
    { serial: outcome.serial, gtin: normalizeGtin(outcome.gtin), status, reason, deviceId: outcome.deviceId },
  ]);
  if (unknown.length > 0) {
    throw new Error(
      `serial ${outcome.serial} of GTIN ${outcome.gtin} is not allocated in tenant ${outcome.tenantId}`,
    );
  }
  // The event points at the label's proof, which in turn names the event (by its hash, in the seal receipt).
  const proof = `${publicBaseUrl}${labelProofPath(normalizeGtin(outcome.gtin), outcome.serial)}`;
  const eventId = await recordCommissioning(db, meta, written, proof);
  const plans = planPrintEvents({ ...meta, jobRef: outcome.jobRef }, written);
  await queuePrintEvents(db, { ...meta, correlationId: outcome.correlationId }, plans);
  if (!eventId) return null;
  const { document } = await db
    .selectFrom('epcis_events')
    .select('document')
    .where('tenant_id', '=', outcome.tenantId)
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();
  const sha256 = createHash('sha256')
    .update(canonicalJson(JSON.parse(document)))
    .digest('hex');
  return { eventId, sha256 };
}

/**
 * The carriers side of the AIDC print loop (the passports domain supplies `isReadyToPrint`); wired in
 * the composition root.
 */
export function carriersPrintLoop(deps: { publicBaseUrl: string }): Omit<PrintLoopPort, 'isReadyToPrint'> {
  return {
    findAllocatedSerial: (db, tenantId, gtin, serial) =>
      findAllocatedSerial(db, deps.publicBaseUrl, tenantId, gtin, serial),
    markInPrintLoop: async (db, tenantId, productId) => {
      await markProductInPrintLoop(db, tenantId, productId);
    },
    confirmPrinted: (db, outcome) => confirmOutcome(db, outcome, 'printed', null, deps.publicBaseUrl),
    confirmFailed: async (db, outcome) => {
      await confirmOutcome(db, outcome, 'failed', outcome.reason, deps.publicBaseUrl);
    },
  };
}
