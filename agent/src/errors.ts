/**
 * The one error type of the agent. Every failure carries a machine-readable `code` the callers branch
 * on, an HTTP status and the control plane's error code when it came from an API answer, structured
 * details and the standard `cause`. Catch `unknown`, coerce once with {@link toAgentError}.
 */

export type AgentErrorCode =
  // configuration and identity
  | 'CONFIG_INVALID'
  | 'NOT_ENROLLED'
  | 'ALREADY_ENROLLED'
  | 'KEY_FILE_MODE'
  | 'KEY_INVALID'
  | 'ENROLL_FAILED'
  | 'TOKEN_FAILED'
  // talking to the control plane
  | 'NETWORK'
  | 'TIMEOUT'
  | 'HTTP'
  | 'BAD_RESPONSE'
  // envelopes
  | 'ENVELOPE_INVALID'
  // rendering
  | 'RENDER_FAILED'
  | 'QR_MISMATCH'
  | 'SYMBOL_MISMATCH'
  | 'TEMPLATE_TOO_SMALL'
  // devices
  | 'TRANSPORT_ERROR'
  | 'TRANSPORT_CLOSED'
  | 'PRINTER_NOT_READY'
  | 'PRINTER_NO_ANSWER'
  | 'PRINT_TIMEOUT'
  | 'RFID_READBACK_MISMATCH'
  | 'NFC_READBACK_MISMATCH'
  | 'SCANNER_TIMEOUT'
  // a format the printer dropped unstarted when another attempt cancelled what it held
  | 'FORMAT_CANCELLED'
  // the job pipeline
  | 'LEASE_LOST'
  | 'RESULT_REJECTED'
  | 'JOB_ABORTED'
  | 'NOT_WAITING'
  | 'INTERNAL';

export interface AgentErrorOptions {
  /** HTTP status of the answer this error came from. */
  status?: number | undefined;
  /** The control plane's `error.code`, e.g. `STALE_ATTEMPT`. */
  apiCode?: string | undefined;
  details?: Record<string, unknown> | undefined;
  cause?: unknown;
}

export class AgentError extends Error {
  override readonly name = 'AgentError';
  readonly code: AgentErrorCode;
  readonly status: number | undefined;
  readonly apiCode: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: AgentErrorCode, message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.apiCode = options.apiCode;
    this.details = options.details;
  }

  /** A short machine-friendly form for logs and the console (no stack, no cause chain). */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.apiCode !== undefined ? { apiCode: this.apiCode } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}

/** True when `err` is an {@link AgentError}, optionally with the given code. */
export function isAgentError(err: unknown, code?: AgentErrorCode): err is AgentError {
  return err instanceof AgentError && (code === undefined || err.code === code);
}

/** Coerces anything thrown into an {@link AgentError} (`INTERNAL` unless it already is one). */
export function toAgentError(err: unknown, code: AgentErrorCode = 'INTERNAL'): AgentError {
  if (err instanceof AgentError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AgentError(code, message, { cause: err });
}
