/**
 * Endpoint secrets, exactly as Standard Webhooks: `whsec_` followed by base64 of random bytes; the HMAC
 * key is the base64-decoded part after the prefix.
 */
import { randomBytes } from 'node:crypto';
import { CodecError } from '../errors/codec-error.js';
import { base64Decode, base64Encode } from './encoding.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of a `whsec_` secret. Throws `CodecError` `INVALID_WEBHOOK_SECRET` for anything else:
 * a wrong secret is a configuration error, never a reason to sign with the raw string.
 *
 * @example
 * webhookSecretKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').length; // 24
 */
export function webhookSecretKey(secret: string): Uint8Array {
  const key =
    typeof secret === 'string' && secret.startsWith(WEBHOOK_SECRET_PREFIX)
      ? base64Decode(secret.slice(WEBHOOK_SECRET_PREFIX.length))
      : undefined;
  if (key === undefined || key.length === 0) {
    throw new CodecError('INVALID_WEBHOOK_SECRET', 'a webhook secret is "whsec_" followed by base64');
  }
  return key;
}

/**
 * A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks asks for 24 to 64).
 *
 * @example
 * generateWebhookSecret(); // 'whsec_3q2+7w...='
 */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${base64Encode(randomBytes(32))}`;
}
