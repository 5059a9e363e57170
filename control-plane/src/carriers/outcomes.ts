/**
 * The one code path that writes print outcomes (metadata.print) and the one that builds their events,
 * shared by POST /carriers/print-status and the AIDC print loop (SEALED, DEAD_LETTER).
 */
import { isValidGs1Serial, sgtinPureIdentityUri } from '@dpp/shared';
import { type EpcisEvent, commissioningEvent, recordEpcisEvents } from '../epcis/index.js';
import { type DomainEvent, recordEvents } from '../events/index.js';
import type { Db, WriteSet } from '../store/index.js';
import { FAILED_CHUNK_SIZE, type OutcomeSource, type PrintStatus } from './model.js';
import {
  lookupSerials,
  lookupSerialsByText,
  type PrintRow,
  printWrite,
  type SerialRow,
  type SharedPrintColumns,
  writePrint,
} from './serial-rows.js';

/** One reported outcome. */
export interface OutcomeInput {
  serial: string;
  /** When given, the serial must belong to this GTIN (14 digits), else it is unknown. */
  gtin?: string | undefined;
  status: PrintStatus;
  reason?: string | null | undefined;
  deviceId?: string | null | undefined;
}

/** A known serial a report wrote. */
export interface WrittenOutcome {
  serial: string;
  gtin: string;
  productId: string;
  companyPrefixLength: number;
  status: PrintStatus;
  reason: string | null;
  /** Its outcome before this report (null = pending). */
  previous: string | null;
}

export interface AppliedOutcomes {
  /** Known serials, once each, in order of first appearance, with their last outcome. */
  written: WrittenOutcome[];
  /** Serials the tenant does not have (or not under the GTIN the result named). */
  unknown: string[];
}

export interface ReportMeta {
  tenantId: string;
  reportRef: string;
  source: OutcomeSource;
  /** reportedAt: the instant every outcome of the report carries. */
  at: string;
}

const LOOKUP_CHUNK = 500;

/** What the allocator hands out: decimal, no leading zeros, at most 12 digits; its number is its text. */
const looksAllocated = (serial: string) => /^[1-9][0-9]{0,11}$/.test(serial);
/** A serial registered through POST /carriers/batch `serials`: any other AI (21) serial. */
const looksRegistered = (serial: string) => !looksAllocated(serial) && isValidGs1Serial(serial);

/** One report and its results, as {@link applyReports} takes it. */
export interface Report {
  meta: ReportMeta;
  results: readonly OutcomeInput[];
}

/**
 * Replaces metadata.print wholesale (status, reason, deviceId, reportedAt) for every known serial of the
 * report; within one report the last result for a serial wins (api-v2.md, Serialization record).
 * Serials the tenant does not have are returned as unknown and change nothing.
 */
export async function applyOutcomes(
  trx: Db,
  meta: ReportMeta,
  results: readonly OutcomeInput[],
): Promise<AppliedOutcomes> {
  const [applied] = await applyReports(trx, [{ meta, results }]);
  return applied!;
}

/**
 * Serials a caller read already, unlocked ({@link serialRowsQuery}), and the write set their UPDATEs join:
 * each UPDATE is then guarded by the print_status read and expects every row it names to change, so a
 * serial reported meanwhile fails the set instead of being commissioned twice.
 */
export interface ReadSerials {
  known: ReadonlyMap<string, SerialRow>;
  writes: WriteSet;
}

/**
 * Several reports of one tenant, each applied as {@link applyOutcomes} applies it (its own reportRef on
 * its serials, its own written and unknown), with one lookup of their serials and one UPDATE per
 * distinct (status, reason, reportedAt, source) for them all, 500 serials a statement at most: a batch
 * of print-job results seals many jobs, each its own report of one serial. When reports share a serial
 * they are applied one after another, so the later one wins and its `previous` is the earlier one's
 * outcome. With `read`, the serials are those already read and the UPDATEs join its write set.
 */
export async function applyReports(
  trx: Db,
  reports: readonly Report[],
  read?: ReadSerials,
): Promise<AppliedOutcomes[]> {
  if (reports.length === 0) return [];
  // Map.set keeps a key's first position and takes its last value: last write wins, stable order.
  const lasts = reports.map(({ results }) => {
    const last = new Map<string, OutcomeInput>();
    for (const r of results) last.set(r.serial, r);
    return last;
  });
  const serials = new Set(lasts.flatMap((last) => [...last.keys()]));
  if (serials.size < lasts.reduce((n, last) => n + last.size, 0)) {
    // A write set changes a row once: reports that share a serial are for the locking path.
    if (read) throw new Error('reports that share a serial cannot be written as one set');
    const applied: AppliedOutcomes[] = [];
    for (const report of reports) applied.push(...(await applyReports(trx, [report])));
    return applied;
  }
  const { tenantId } = reports[0]!.meta;
  const known = read?.known ?? (await lookupKnown(trx, tenantId, [...serials]));

  const applied: AppliedOutcomes[] = [];
  // One UPDATE per distinct (status, reason, reportedAt, source); each row carries its device and report.
  const groups = new Map<string, { set: SharedPrintColumns; rows: PrintRow[] }>();
  reports.forEach(({ meta }, i) => {
    const written: WrittenOutcome[] = [];
    const unknown: string[] = [];
    for (const [serial, r] of lasts[i]!) {
      const row = known.get(serial);
      if (!row || (r.gtin !== undefined && r.gtin !== row.gtin)) {
        unknown.push(serial);
        continue;
      }
      const reason = r.reason ?? null;
      written.push({
        serial,
        gtin: row.gtin,
        productId: row.product_id,
        companyPrefixLength: row.cpl,
        status: r.status,
        reason,
        previous: row.print_status,
      });
      const key = JSON.stringify([r.status, reason, meta.at, meta.source]);
      const set = {
        print_status: r.status,
        print_reason: reason,
        print_reported_at: meta.at,
        print_source: meta.source,
      };
      const group = groups.get(key) ?? { set, rows: [] };
      group.rows.push({
        seq: Number(row.seq),
        deviceId: r.deviceId ?? null,
        reportRef: meta.reportRef,
        ...(read ? { previous: row.print_status } : {}),
      });
      groups.set(key, group);
    }
    applied.push({ written, unknown });
  });
  for (const { set, rows } of groups.values()) {
    for (let i = 0; i < rows.length; i += LOOKUP_CHUNK) {
      const chunk = rows.slice(i, i + LOOKUP_CHUNK).sort((a, b) => a.seq - b.seq);
      if (read) {
        read.writes.addRaw(printWrite(trx, tenantId, chunk, set), {
          rows: chunk.length,
          otherwise: 'a serial of the set was reported since it was read',
        });
      } else await writePrint(trx, tenantId, chunk, set);
    }
  }
  return applied;
}

/** The tenant's rows of these serials, by serial; serials it does not have are missing. */
async function lookupKnown(
  trx: Db,
  tenantId: string,
  serials: readonly string[],
): Promise<Map<string, SerialRow>> {
  // Ascending, so concurrent reports lock their serials in one order (see lookupSerials).
  const candidates = serials
    .filter(looksAllocated)
    .map(Number)
    .sort((a, b) => a - b);
  const known = new Map<string, SerialRow>();
  for (let i = 0; i < candidates.length; i += LOOKUP_CHUNK) {
    for (const r of await lookupSerials(trx, tenantId, candidates.slice(i, i + LOOKUP_CHUNK))) {
      known.set(r.serial, r);
    }
  }
  const registered = serials.filter(looksRegistered).sort();
  for (let i = 0; i < registered.length; i += LOOKUP_CHUNK) {
    for (const r of await lookupSerialsByText(trx, tenantId, registered.slice(i, i + LOOKUP_CHUNK))) {
      known.set(r.serial, r);
    }
  }
  return known;
}

/**
 * Records the EPCIS commissioning ObjectEvent for serials that became printed with this report (a serial
 * already printed is not commissioned twice): one event naming all their EPCs. Returns its eventID.
 */
export async function recordCommissioning(
  trx: Db,
  meta: ReportMeta,
  written: readonly WrittenOutcome[],
  certificationInfo?: string,
): Promise<string | null> {
  const event = commissioningOf(meta, written, certificationInfo);
  if (!event) return null;
  const { stored } = await recordEpcisEvents(trx, meta.tenantId, [event], {
    source: 'print-loop',
    recordTime: meta.at,
  });
  return stored[0] ?? null;
}

/** The commissioning event {@link recordCommissioning} records, or null when no serial became printed. */
export function commissioningOf(
  meta: ReportMeta,
  written: readonly WrittenOutcome[],
  certificationInfo?: string,
): EpcisEvent | null {
  const fresh = written.filter((w) => w.status === 'printed' && w.previous !== 'printed');
  if (fresh.length === 0) return null;
  const epcs = fresh.map((w) => sgtinPureIdentityUri(w.gtin, w.serial, w.companyPrefixLength));
  return commissioningEvent({ epcs, at: meta.at, certificationInfo });
}

/** The events of one report: one entry per type, the data of each event (print.failed may be chunked). */
export interface PrintEventPlan {
  type: 'print.confirmed' | 'print.failed';
  /** How many print.failed events share the reportRef. */
  chunks?: number;
  payloads: Record<string, unknown>[];
}

/**
 * Plans print.confirmed for the printed serials and print.failed for the failed ones (with their
 * reasons), the failures split into chunks of at most 250 sharing the report's reportRef.
 */
export function planPrintEvents(
  meta: ReportMeta & { jobRef?: string | undefined },
  written: readonly WrittenOutcome[],
): PrintEventPlan[] {
  const plans: PrintEventPlan[] = [];
  const common = {
    reportRef: meta.reportRef,
    source: meta.source,
    ...(meta.jobRef ? { jobRef: meta.jobRef } : {}),
  };
  const printed = written.filter((w) => w.status === 'printed');
  if (printed.length > 0) {
    plans.push({
      type: 'print.confirmed',
      payloads: [
        { ...common, serials: printed.map((w) => ({ gtin: w.gtin, serial: w.serial })), reportedAt: meta.at },
      ],
    });
  }
  const failed = written.filter((w) => w.status === 'failed');
  if (failed.length > 0) {
    const chunks = Math.ceil(failed.length / FAILED_CHUNK_SIZE);
    const payloads = Array.from({ length: chunks }, (_, c) => {
      const part = failed.slice(c * FAILED_CHUNK_SIZE, (c + 1) * FAILED_CHUNK_SIZE);
      return {
        ...common,
        chunk: c + 1,
        chunks,
        serials: part.map((w) => ({ gtin: w.gtin, serial: w.serial })),
        failures: part.map((w) => ({ serial: w.serial, gtin: w.gtin, reason: w.reason })),
        reportedAt: meta.at,
      };
    });
    plans.push({ type: 'print.failed', chunks, payloads });
  }
  return plans;
}

/** Queues the planned events (domain event + outbox row each) in the caller's transaction. */
export async function queuePrintEvents(
  trx: Db,
  meta: ReportMeta & { correlationId: string | null },
  plans: readonly PrintEventPlan[],
): Promise<void> {
  await recordEvents(trx, printEvents(meta, plans));
}

/** The domain events of a report's plans, in order. */
export function printEvents(
  meta: ReportMeta & { correlationId: string | null },
  plans: readonly PrintEventPlan[],
): DomainEvent[] {
  return plans.flatMap((plan) =>
    plan.payloads.map((data) => ({
      tenantId: meta.tenantId,
      type: plan.type,
      resource: { type: 'print_report', id: meta.reportRef },
      data,
      correlationId: meta.correlationId,
      occurredAt: meta.at,
    })),
  );
}
