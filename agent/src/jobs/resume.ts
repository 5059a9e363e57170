/**
 * Resuming an attempt the agent was working on when it stopped or crashed: what its journal says was
 * already reported, and whether the label may be out.
 */
import type { AidcEnvelopeClaims, Attestation, RenderManifest, ScanResult, SpoolReceipt } from '@dpp/shared';
import { jobFailure } from './failures.js';
import type { JournalEntry } from './journal.js';
import type { LaneTicket } from './print-lane.js';

/** An attempt left unfinished by an earlier run of the agent, with what start-up found on its printer. */
export interface Resume {
  entry: JournalEntry;
  /**
   * Formats were still held in the printer at start-up and were cleared: a label sent before did not come
   * out, so it may be sent again. False when the printer held none, or could not tell (one-way, offline).
   */
  heldCleared: boolean;
  /** Its place among the labels sent to its printer before the restart (print-lane.ts), when it was sent. */
  sent?: LaneTicket | undefined;
}

/** Evidence of an attempt already reported (queued in the outbox), by kind. */
export interface Reported {
  render_manifest?: RenderManifest;
  /** Written ahead of the first byte to the printer: the receipt the send will give (see `JobRun.send`). */
  sending?: SpoolReceipt;
  spool_receipt?: SpoolReceipt;
  attestation?: Attestation;
  scan_result?: ScanResult;
  evidence_bundle?: { jws: string };
}

/** Evidence journalled before a restart says the label may be out (sent, or its send begun). */
export function sentBefore(evidence: { spool_receipt?: unknown; sending?: unknown }): boolean {
  return evidence.spool_receipt !== undefined || evidence.sending !== undefined;
}

/** The claims a resumed attempt started with, if the fresh envelope is about the same label. */
export function sameLabel(before: AidcEnvelopeClaims, fresh: AidcEnvelopeClaims): AidcEnvelopeClaims {
  const same =
    before.job_ref === fresh.job_ref &&
    before.attempt_id === fresh.attempt_id &&
    before.gtin === fresh.gtin &&
    before.serial === fresh.serial &&
    before.digital_link === fresh.digital_link &&
    // The EPC of either scheme (an envelope of an earlier control plane names only its SGTIN-96).
    (before.epc?.hex ?? before.sgtin96_epc) === (fresh.epc?.hex ?? fresh.sgtin96_epc);
  if (!same)
    throw jobFailure(
      'envelope_mismatch',
      'the fresh envelope is about another label than the one journalled',
    );
  return before;
}
