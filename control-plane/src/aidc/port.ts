import type { LabelEpc } from '@dpp/shared';
import type { CompiledQuery, SelectQueryBuilder } from 'kysely';
import type { Database, Db, WriteSet } from '../store/index.js';

/** A serial allocated by the carriers domain, with what a label needs. */
export interface AllocatedSerial {
  productId: string;
  productName: string;
  gtin: string;
  serial: string;
  digitalLink: string;
  /** The EPC of its tag, in the scheme the serial was given when allocated. */
  epc: LabelEpc;
}

export interface PrintOutcome {
  tenantId: string;
  gtin: string;
  serial: string;
  jobRef: string;
  deviceId: string | null;
  at: string;
  correlationId: string | null;
}

/** The EPCIS commissioning event a SEALED recorded: its eventID and the SHA-256 of its canonical JSON (RFC 8785). */
export interface CommissioningRef {
  eventId: string;
  sha256: string;
}

/** The rows {@link PrintLoopPort.serialsRead} read, handed back as they came. */
export type SerialRead = readonly object[];

/**
 * What the AIDC domain needs from the print loop (carriers) and passports, wired in the composition root
 * so the domains stay independent. Every write runs in the caller's transaction.
 */
export interface PrintLoopPort {
  findAllocatedSerial(
    db: Db,
    tenantId: string,
    gtin: string,
    serial: string,
  ): Promise<AllocatedSerial | null>;
  /** The passport's readyToPrint flag (api-v2.md: a validation recorded and the passport published). */
  isReadyToPrint(db: Db, tenantId: string, productId: string): Promise<boolean>;
  /** The product now has serials in the print loop (DELETE answers PRODUCT_REFERENCED). */
  markInPrintLoop(db: Db, tenantId: string, productId: string): Promise<void>;
  /**
   * SEALED of one or more jobs (a batch of results seals several at once): for each, metadata.print =
   * printed, the EPCIS commissioning event, print.confirmed queued. Resolves with each one's event, in
   * order (null when the serial was printed already and no new event was recorded). With `writes`, the
   * rows that only add (the events, their EPCs, the outbox) are added to that write set of the caller's
   * transaction, written when the caller flushes it.
   */
  confirmPrinted(
    db: Db,
    outcomes: readonly PrintOutcome[],
    writes?: WriteSet,
    serials?: SerialRead,
  ): Promise<(CommissioningRef | null)[]>;
  /**
   * The read of the serials a subquery names (the serials of the jobs a batch seals), for the caller's read
   * set. Its rows, handed back to {@link confirmPrinted} with a write set, stand for its own locked lookup:
   * its writes are then guarded by what was read, and join the set.
   */
  serialsRead(
    db: Db,
    tenantId: string,
    serials: SelectQueryBuilder<Database, keyof Database, { serial: string }>,
  ): CompiledQuery<object>;
  /** DEAD_LETTER: metadata.print = failed (the serial joins the re-print file), print.failed queued. */
  confirmFailed(db: Db, outcome: PrintOutcome & { reason: string }): Promise<void>;
}
