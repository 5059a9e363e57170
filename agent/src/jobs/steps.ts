/**
 * Where a job stands on this device: finer than the control plane's states, for the console and logs.
 * The control plane's state machine (`@dpp/shared` aidc/states.ts) is what the results move.
 */
export const JOB_STEPS = [
  'claimed',
  'rendered',
  'waiting_printer',
  'submitted',
  'printing',
  'awaiting_attestation',
  'attested',
  'scanning',
  'awaiting_scan',
  'scanned',
  'sealing',
  'sealed',
  'failed',
  /** The attempt is no longer ours (superseded or its lease expired): nothing more is reported. */
  'abandoned',
] as const;
export type JobStep = (typeof JOB_STEPS)[number];

export const FINAL_STEPS: readonly JobStep[] = ['sealed', 'failed', 'abandoned'];

/** Reasons of FAILED results the agent reports (the `failure.reason` field). */
export type FailureReason =
  | 'envelope_invalid'
  | 'envelope_mismatch'
  | 'render_failed'
  | 'qr_mismatch'
  | 'symbol_mismatch'
  | 'template_too_small'
  | 'printer_not_ready'
  | 'printer_offline'
  | 'transport_error'
  | 'line_dropped'
  | 'print_timeout'
  | 'rfid_void'
  | 'nfc_void'
  | 'scan_noread'
  | 'scan_mismatch'
  | 'scan_epc_mismatch'
  | 'scan_notag'
  | 'scan_timeout'
  | 'agent_stopped'
  | 'operator'
  | 'internal';
