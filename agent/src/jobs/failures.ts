/** Maps what went wrong to the `failure` of a FAILED result (a short reason and a detail line). */
import { isDeviceProtocolError } from '@dpp/shared';
import { AgentError, toAgentError } from '../errors.js';
import type { FailureReason } from './steps.js';

/** A failure the pipeline decided on, with its reason. */
export function jobFailure(
  reason: FailureReason | string,
  message: string,
  details: Record<string, unknown> = {},
): AgentError {
  return new AgentError('JOB_ABORTED', message, { details: { ...details, reason } });
}

const BY_CODE: Partial<Record<AgentError['code'], FailureReason>> = {
  ENVELOPE_INVALID: 'envelope_invalid',
  RENDER_FAILED: 'render_failed',
  QR_MISMATCH: 'qr_mismatch',
  SYMBOL_MISMATCH: 'symbol_mismatch',
  TEMPLATE_TOO_SMALL: 'template_too_small',
  PRINTER_NOT_READY: 'printer_not_ready',
  PRINTER_NO_ANSWER: 'printer_offline',
  TRANSPORT_ERROR: 'transport_error',
  TRANSPORT_CLOSED: 'line_dropped',
  PRINT_TIMEOUT: 'print_timeout',
  RFID_READBACK_MISMATCH: 'rfid_void',
  NFC_READBACK_MISMATCH: 'nfc_void',
  SCANNER_TIMEOUT: 'scan_timeout',
};

export function failureOf(err: unknown): { reason: string; detail: string } {
  if (isDeviceProtocolError(err)) return { reason: 'render_failed', detail: err.message.slice(0, 1000) };
  const e = toAgentError(err);
  let reason: string = BY_CODE[e.code] ?? 'internal';
  if (e.code === 'JOB_ABORTED')
    reason = typeof e.details?.reason === 'string' ? e.details.reason : 'internal';
  return { reason: reason.slice(0, 100), detail: e.message.slice(0, 1000) };
}
