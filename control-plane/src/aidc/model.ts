import {
  type EpcScheme,
  type LabelEpc,
  type JobState,
  type LabelTemplate,
  type PrintAttempt,
  type PrintEvidence,
  type PrintJob,
} from '@dpp/shared';
import type { PrintAttemptTable, PrintEvidenceTable, PrintJobTable } from '../store/index.js';

/** The API's view of a job, an attempt and a piece of evidence: the shared wire contract. */
export type JobView = PrintJob;
export type AttemptView = PrintAttempt;
export type EvidenceView = PrintEvidence;

/** The EPC a job's tag carries (migration 0021 copied each earlier job's SGTIN-96 into epc_hex). */
export function jobEpc(r: Pick<PrintJobTable, 'epc_scheme' | 'epc_hex'>): LabelEpc {
  return { scheme: r.epc_scheme as EpcScheme, hex: r.epc_hex };
}

export function jobView(r: PrintJobTable): JobView {
  return {
    jobRef: r.job_ref,
    state: r.state as JobState,
    productId: r.product_id,
    gtin: r.gtin,
    serial: r.serial,
    digitalLink: r.digital_link,
    sgtin96Epc: jobEpc(r).scheme === 'sgtin-96' ? r.sgtin96_epc : null,
    epc: jobEpc(r),
    printer: r.printer,
    labelTemplate: JSON.parse(r.label_template) as LabelTemplate,
    attemptId: r.attempt_id,
    attemptCount: r.attempt_count,
    maxAttempts: r.max_attempts,
    deviceId: r.device_id,
    leaseExpiresAt: r.lease_expires_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    terminalAt: r.terminal_at,
  };
}

export function attemptView(r: PrintAttemptTable): AttemptView {
  return {
    attemptId: r.attempt_id,
    number: r.number,
    deviceId: r.device_id,
    printer: r.printer,
    state: r.state,
    claimedAt: r.claimed_at,
    endedAt: r.ended_at,
    failureReason: r.failure_reason,
  };
}

export function evidenceView(r: PrintEvidenceTable): EvidenceView {
  return {
    attemptId: r.attempt_id,
    state: r.state,
    kind: r.kind,
    payload: JSON.parse(r.payload) as unknown,
    actor: { type: r.actor_type, id: r.actor_id },
    recordedAt: r.recorded_at,
  };
}
