/**
 * Signing of webhook deliveries.
 *
 * V2 follows Standard Webhooks: `v1,` + base64 HMAC-SHA256 over `${id}.${timestamp}.${rawBody}`, sent in
 * `X-Service-Signature-V2` with the per-delivery `X-Service-Timestamp` (unix seconds) and
 * `X-Service-Delivery-Id` (stable across retries). The legacy V1 header `X-Service-Signature` is
 * `sha256=` + hex HMAC-SHA256 of the raw body alone, with the same key; it has no replay protection.
 */
import { createHmac } from 'node:crypto';
import { CodecError } from '../errors/codec-error.js';
import { bodyBytes, utf8 } from './encoding.js';
import { webhookSecretKey } from './secret.js';

/** Header names of a delivery, as sent. Receivers look them up case-insensitively. */
export const WEBHOOK_HEADERS = {
  deliveryId: 'X-Service-Delivery-Id',
  timestamp: 'X-Service-Timestamp',
  signature: 'X-Service-Signature-V2',
  legacySignature: 'X-Service-Signature',
} as const;

/**
 * The signature headers of one delivery attempt. A type alias rather than an interface so it is
 * assignable to `Record<string, string>` (fetch `headers`, the input of `verifyWebhook`).
 */
export type WebhookSignatureHeaders = {
  'X-Service-Delivery-Id': string;
  'X-Service-Timestamp': string;
  'X-Service-Signature-V2': string;
  'X-Service-Signature': string;
};

/** What {@link signWebhook} needs. */
export interface SignWebhookInput {
  /** The delivery id: letters, digits, `_` and `-`, at most 128 (no `.`, which separates the signed parts). */
  id: string;
  /** Signing time in unix seconds. */
  timestamp: number;
  /** The exact bytes that will be sent. */
  body: string | Uint8Array;
  /** The endpoint secret, `whsec_<base64>`. */
  secret: string;
}

const DELIVERY_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * True for a delivery id we sign: `[A-Za-z0-9_-]{1,128}`. A `.` would make `${id}.${timestamp}.${body}`
 * ambiguous, so it is refused.
 *
 * @example
 * isValidDeliveryId('msg_p5jXN8AQM9LWM0D4loKWxJek'); // true
 */
export function isValidDeliveryId(id: string): boolean {
  return typeof id === 'string' && DELIVERY_ID.test(id);
}

/**
 * Base64 HMAC-SHA256 of the Standard Webhooks signed content: `${id}.${timestamp}.` then the raw body bytes.
 *
 * @example
 * hmacV2(key, 'msg_1', '1614265330', utf8('{}')); // 'base64...'
 */
export function hmacV2(key: Uint8Array, id: string, timestamp: string, body: Uint8Array): string {
  return createHmac('sha256', key)
    .update(utf8(`${id}.${timestamp}.`))
    .update(body)
    .digest('base64');
}

/**
 * Hex HMAC-SHA256 of the raw body alone (legacy V1 header).
 *
 * @example
 * hmacV1(key, utf8('{}')); // '64 hex digits'
 */
export function hmacV1(key: Uint8Array, body: Uint8Array): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/**
 * Signs one delivery attempt and returns the headers to send with it.
 * Throws `CodecError` `INVALID_WEBHOOK_SECRET` or `INVALID_WEBHOOK_INPUT`.
 *
 * @example
 * signWebhook({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330, body: '{"test": 2432232314}',
 *   secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })['X-Service-Signature-V2'];
 * // 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 */
export function signWebhook(input: SignWebhookInput): WebhookSignatureHeaders {
  const key = webhookSecretKey(input.secret);
  if (!isValidDeliveryId(input.id)) {
    throw new CodecError('INVALID_WEBHOOK_INPUT', `invalid delivery id ${JSON.stringify(input.id)}`);
  }
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) {
    throw new CodecError(
      'INVALID_WEBHOOK_INPUT',
      `timestamp must be unix seconds, got ${String(input.timestamp)}`,
    );
  }
  const timestamp = String(input.timestamp);
  const body = bodyBytes(input.body);
  return {
    'X-Service-Delivery-Id': input.id,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature-V2': `v1,${hmacV2(key, input.id, timestamp, body)}`,
    'X-Service-Signature': `sha256=${hmacV1(key, body)}`,
  };
}
