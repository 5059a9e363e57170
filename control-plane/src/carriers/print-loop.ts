import { createHash, randomUUID } from 'node:crypto';
import { type EpcScheme, canonicalJson, isValidGtin, labelProofPath, normalizeGtin } from '@dpp/shared';
import type {
  AllocatedSerial,
  CommissioningRef,
  PrintLoopPort,
  PrintOutcome,
  SerialRead,
} from '../aidc/port.js';
import { recordEpcisEvents } from '../epcis/index.js';
import { recordEvents } from '../events/index.js';
import { markProductInPrintLoop } from '../products/index.js';
import type { Db, WriteSet } from '../store/index.js';
import { labelCodes } from './codes.js';
import { type SerialRow, serialIs, serialRowsQuery } from './serial-rows.js';
import type { PrintStatus } from './model.js';
import {
  applyReports,
  type ReadSerials,
  commissioningOf,
  planPrintEvents,
  printEvents,
  queuePrintEvents,
  type ReportMeta,
  type WrittenOutcome,
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
    .select(['s.product_id', 's.gtin', 's.serial', 's.epc_scheme', 'p.name', 'p.company_prefix_length'])
    .where('s.tenant_id', '=', tenantId)
    .where(serialIs('s', serial))
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
    epc: codes.epc(row.serial, row.epc_scheme as EpcScheme),
  };
}

/**
 * Terminal outcomes of print jobs of one tenant, each as one print-status report of its serial: its own
 * report and metadata.print. The reports are applied together (see applyReports).
 */
async function applyJobOutcomes(
  db: Db,
  outcomes: readonly PrintOutcome[],
  status: PrintStatus,
  reason: string | null,
  read?: ReadSerials,
): Promise<{ meta: ReportMeta; written: WrittenOutcome[] }[]> {
  const reports = outcomes.map((outcome) => ({
    meta: { tenantId: outcome.tenantId, reportRef: randomUUID(), source: 'aidc' as const, at: outcome.at },
    results: [
      {
        serial: outcome.serial,
        gtin: normalizeGtin(outcome.gtin),
        status,
        reason,
        deviceId: outcome.deviceId,
      },
    ],
  }));
  const applied = await applyReports(db, reports, read);
  return applied.map(({ written, unknown }, i) => {
    const outcome = outcomes[i]!;
    if (unknown.length > 0) {
      throw new Error(
        `serial ${outcome.serial} of GTIN ${outcome.gtin} is not allocated in tenant ${outcome.tenantId}`,
      );
    }
    return { meta: reports[i]!.meta, written };
  });
}

/**
 * The SEALED outcomes of print jobs, each written exactly as a print-status report of its one serial:
 * metadata.print, the EPCIS commissioning event when it became printed, and print.confirmed (source
 * `aidc`, with the jobRef), all in the caller's transaction. Unlike print-status, a failure to queue the
 * event fails the transition: the job's terminal state, metadata.print and the event commit together
 * (DESIGN.md). Jobs of one tenant sealed at one instant (a batch of results) share the lookup and the
 * UPDATE of their serials, the INSERTs of their EPCIS events and domain events and the read of the events
 * back; each job's report stays its own. With `serials` (read by {@link serialRowsQuery} in the caller's read
 * set) and `writes`, the serials are not looked up again and their UPDATE joins the set, guarded by the
 * print_status read.
 */
async function confirmPrinted(
  db: Db,
  outcomes: readonly PrintOutcome[],
  publicBaseUrl: string,
  writes?: WriteSet,
  serials?: SerialRead,
): Promise<(CommissioningRef | null)[]> {
  const read: ReadSerials | undefined =
    writes && serials
      ? { writes, known: new Map((serials as SerialRow[]).map((r) => [r.serial, r])) }
      : undefined;
  const together = new Map<string, PrintOutcome[]>();
  for (const o of outcomes) {
    const at = `${o.tenantId}\n${o.at}`;
    together.set(at, [...(together.get(at) ?? []), o]);
  }
  const refs = new Map<PrintOutcome, CommissioningRef | null>();
  for (const group of together.values()) {
    const confirmed = await confirmPrintedTogether(db, group, publicBaseUrl, writes, read);
    group.forEach((o, i) => refs.set(o, confirmed[i]!));
  }
  return outcomes.map((o) => refs.get(o)!);
}

/** {@link confirmPrinted} for jobs of one tenant sealed at one instant. */
async function confirmPrintedTogether(
  db: Db,
  outcomes: readonly PrintOutcome[],
  publicBaseUrl: string,
  writes: WriteSet | undefined,
  read: ReadSerials | undefined,
): Promise<(CommissioningRef | null)[]> {
  const { tenantId, at } = outcomes[0]!;
  const reports = (await applyJobOutcomes(db, outcomes, 'printed', null, read)).map((applied, i) => ({
    outcome: outcomes[i]!,
    ...applied,
  }));
  // The event points at the label's proof, which in turn names the event (by its hash, in the seal receipt).
  const events = reports.map(({ outcome, meta, written }) => {
    const proof = `${publicBaseUrl}${labelProofPath(normalizeGtin(outcome.gtin), outcome.serial)}`;
    return commissioningOf(meta, written, proof);
  });
  const recording = events.filter((e) => e !== null);
  const { stored, documents } =
    recording.length === 0
      ? { stored: [], documents: [] }
      : await recordEpcisEvents(db, tenantId, recording, {
          source: 'print-loop',
          recordTime: at,
          ...(writes ? { writes } : {}),
        });
  // Each event has a fresh random eventID, so none is a duplicate: the ids come back in the events' order.
  if (stored.length !== recording.length) throw new Error('a commissioning event was not stored');
  // Each event's hash is of the document as stored (the text recordEpcisEvents wrote, not read back).
  let next = 0;
  const refs = events.map((event): CommissioningRef | null => {
    if (!event) return null;
    const eventId = stored[next]!;
    const sha256 = createHash('sha256')
      .update(canonicalJson(JSON.parse(documents[next++]!)))
      .digest('hex');
    return { eventId, sha256 };
  });
  await recordEvents(
    db,
    reports.flatMap(({ outcome, meta, written }) =>
      printEvents(
        { ...meta, correlationId: outcome.correlationId },
        planPrintEvents({ ...meta, jobRef: outcome.jobRef }, written),
      ),
    ),
    writes,
  );
  return refs;
}

/** DEAD_LETTER: written as a print-status report of the serial, with print.failed (see confirmPrinted). */
async function confirmFailed(db: Db, outcome: PrintOutcome & { reason: string }): Promise<void> {
  const { meta, written } = (await applyJobOutcomes(db, [outcome], 'failed', outcome.reason))[0]!;
  const plans = planPrintEvents({ ...meta, jobRef: outcome.jobRef }, written);
  await queuePrintEvents(db, { ...meta, correlationId: outcome.correlationId }, plans);
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
    confirmPrinted: (db, outcomes, writes, serials) =>
      confirmPrinted(db, outcomes, deps.publicBaseUrl, writes, serials),
    serialsRead: serialRowsQuery,
    confirmFailed,
  };
}
