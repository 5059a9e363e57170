/**
 * The one error type of the device wire code in `@dpp/shared` (ZPL and the scanner line protocol).
 *
 * Writers refuse input that would not reach the printer intact (a `^` inside field data starts a new
 * command on the wire); parsers refuse frames that are not the shape the Zebra ZPL II Programming
 * Guide documents. Both throw a `DeviceProtocolError` whose `code` callers branch on.
 */

import { CodecError, type CodecErrorCode, type CodecErrorOptions } from '../errors/codec-error.js';

/** Every code the ZPL and scanner wire code can throw (a subset of the shared codec codes). */
export type DeviceProtocolErrorCode = Extract<
  CodecErrorCode,
  | 'INVALID_FIELD_DATA'
  | 'INVALID_PARAMETER'
  | 'INVALID_EPC_HEX'
  | 'MALFORMED_HOST_STATUS'
  | 'MALFORMED_ERROR_STATUS'
  | 'MALFORMED_HOST_VERIFICATION'
  | 'MALFORMED_SCANNER_LINE'
>;

/**
 * A typed error of the ZPL / scanner wire code: a {@link CodecError}, so callers that handle the shared
 * codecs' errors handle these too.
 *
 * @example
 * try {
 *   parseHostStatus(reply);
 * } catch (err) {
 *   if (isDeviceProtocolError(err, 'MALFORMED_HOST_STATUS')) retryQuery();
 *   else throw err;
 * }
 */
export class DeviceProtocolError extends CodecError {
  override readonly name: string = 'DeviceProtocolError';
  declare readonly code: DeviceProtocolErrorCode;

  constructor(code: DeviceProtocolErrorCode, message: string, options: CodecErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * True when `err` is a {@link DeviceProtocolError}, optionally with the given code.
 *
 * @example
 * if (isDeviceProtocolError(err, 'INVALID_EPC_HEX')) return badRequest(err.message);
 */
export function isDeviceProtocolError(
  err: unknown,
  code?: DeviceProtocolErrorCode,
): err is DeviceProtocolError {
  return err instanceof DeviceProtocolError && (code === undefined || err.code === code);
}
