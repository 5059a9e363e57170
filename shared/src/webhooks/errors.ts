import { CodecError, type CodecErrorOptions } from '../errors/codec-error.js';

/** Why a webhook delivery was refused by {@link verifyWebhook}. */
export type WebhookVerificationErrorCode =
  /** A required header is absent, repeated with different values, or malformed. */
  | 'MISSING_HEADERS'
  /** `X-Service-Timestamp` is further from now than the tolerance (replay protection). */
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  /** No signature in the header matches the body with this secret. */
  | 'SIGNATURE_MISMATCH'
  /** The signature is good but the body is not a delivery envelope. */
  | 'INVALID_PAYLOAD';

/**
 * Thrown when a webhook delivery does not verify. A `CodecError`, so one `catch` handles both.
 *
 * @example
 * try {
 *   verifyWebhook(rawBody, req.headers, secret);
 * } catch (err) {
 *   if (err instanceof WebhookVerificationError) return res.status(400).end(err.code);
 *   throw err;
 * }
 */
export class WebhookVerificationError extends CodecError {
  override readonly name: string = 'WebhookVerificationError';
  declare readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string, options: CodecErrorOptions = {}) {
    super(code, message, options);
  }
}
