/** The one error type of the simulator: a machine-readable `code`, details and the `cause`. */

export type SimErrorCode =
  | 'SOCAT_FAILED'
  | 'TRANSPORT_CLOSED'
  | 'RENDER_FAILED'
  | 'TIMEOUT'
  | 'INVALID_OPTION'
  | 'RFID_MEMORY_OVERRUN'
  | 'NFC_WRITE_REFUSED';

export class SimError extends Error {
  override readonly name: string = 'SimError';
  readonly code: SimErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: SimErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

/** Coerces anything thrown into an Error once. */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
