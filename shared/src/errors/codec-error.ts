/**
 * The one error type of the pure codecs in `@dpp/shared`.
 *
 * A codec never accepts bad input silently: it throws a `CodecError` whose `code` is machine-readable
 * (callers branch on it and map it to HTTP once, e.g. `INVALID_GTIN` → 400) and whose message says
 * what exactly was wrong for a human.
 */

/** Every code a codec of `@dpp/shared` can throw. */
export type CodecErrorCode =
  // gs1/
  | 'INVALID_GTIN'
  | 'INVALID_SERIAL'
  | 'INVALID_DIGITAL_LINK'
  | 'INVALID_AI'
  | 'INVALID_AI_VALUE'
  | 'INVALID_ELEMENT_STRING'
  // epc/
  | 'SERIAL_OUT_OF_RANGE'
  | 'INVALID_EPC'
  | 'INVALID_FILTER'
  | 'INVALID_COMPANY_PREFIX_LENGTH'
  | 'SERIAL_NOT_SGTIN96'
  // nfc/
  | 'INVALID_NDEF'
  // jcs/
  | 'INVALID_JSON'
  // did/
  | 'INVALID_BASE58'
  | 'INVALID_DID'
  | 'UNSUPPORTED_DID_METHOD'
  | 'UNSUPPORTED_MULTICODEC'
  // vc/
  | 'INVALID_KEY'
  | 'INVALID_PROOF_OPTIONS'
  | 'INVALID_DOCUMENT'
  // webhooks/
  | 'INVALID_WEBHOOK_SECRET'
  | 'INVALID_WEBHOOK_INPUT'
  | 'MISSING_HEADERS'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'SIGNATURE_MISMATCH'
  | 'INVALID_PAYLOAD'
  // zpl/ and scanner/ (thrown as DeviceProtocolError)
  | 'INVALID_FIELD_DATA'
  | 'INVALID_PARAMETER'
  | 'INVALID_EPC_HEX'
  | 'MALFORMED_HOST_STATUS'
  | 'MALFORMED_ERROR_STATUS'
  | 'MALFORMED_HOST_VERIFICATION'
  | 'MALFORMED_SCANNER_LINE';

/** Options of a {@link CodecError}: structured details for logs and the standard `cause`. */
export interface CodecErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * A typed error thrown by the codecs of `@dpp/shared`.
 *
 * @example
 * try {
 *   normalizeGtin('12345');
 * } catch (err) {
 *   if (err instanceof CodecError && err.code === 'INVALID_GTIN') return badRequest(err.message);
 *   throw err;
 * }
 */
export class CodecError extends Error {
  override readonly name: string = 'CodecError';
  readonly code: CodecErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: CodecErrorCode, message: string, options: CodecErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

/**
 * True when `err` is a {@link CodecError}, optionally with the given code.
 *
 * @example
 * if (isCodecError(err, 'INVALID_SERIAL')) return res.status(400);
 */
export function isCodecError(err: unknown, code?: CodecErrorCode): err is CodecError {
  return err instanceof CodecError && (code === undefined || err.code === code);
}
