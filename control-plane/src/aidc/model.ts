import { type JobState, type LabelTemplate } from '@dpp/shared';
import type { PrintAttemptTable, PrintEvidenceTable, PrintJobTable } from '../store/index.js';

export interface JobView {
  jobRef: string;
  state: JobState;
  productId: string;
  gtin: string;
  serial: string;
  digitalLink: string;
  sgtin96Epc: string;
  printer: string | null;
  labelTemplate: LabelTemplate;
  attemptId: string | null;
  attemptCount: number;
  maxAttempts: number;
  deviceId: string | null;
  leaseExpiresAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  terminalAt: string | null;
}

export interface AttemptView {
  attemptId: string;
  number: number;
  deviceId: string;
  printer: string;
  state: string;
  claimedAt: string;
  endedAt: string | null;
  failureReason: string | null;
}

export interface EvidenceView {
  attemptId: string;
  state: string;
  kind: string;
  payload: unknown;
  actor: { type: string; id: string | null };
  recordedAt: string;
}

export function jobView(r: PrintJobTable): JobView {
  return {
    jobRef: r.job_ref,
    state: r.state as JobState,
    productId: r.product_id,
    gtin: r.gtin,
    serial: r.serial,
    digitalLink: r.digital_link,
    sgtin96Epc: r.sgtin96_epc,
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
