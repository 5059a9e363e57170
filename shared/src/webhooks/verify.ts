/**
 * Verification of webhook deliveries on the receiving side (api-v2.md, Events, receiver rules 1-2):
 * HMAC over the raw bytes compared in constant time, timestamp within a tolerance of now (5 minutes by
 * default), then the envelope shape. During a secret rotation the V2 header may carry several
 * space-separated signatures (`v1,<a> v1,<b>`); any one matching is enough, as in Standard Webhooks.
 */
import { timingSafeEqual } from 'node:crypto';
import { bodyBytes, utf8 } from './encoding.js';
import { verifiedWebhookEnvelopeSchema, type VerifiedWebhookEnvelope } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import { webhookSecretKey } from './secret.js';
import { WEBHOOK_HEADERS, hmacV1, hmacV2, isValidDeliveryId } from './sign.js';

/**
 * Incoming headers as Node and Express give them (`req.headers`); for a fetch `Headers` object pass
 * `Object.fromEntries(headers)`.
 */
export type IncomingWebhookHeaders = Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the timestamp header and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time (a clock handed in for tests). Default `new Date()`. */
  now?: Date;
}

/** What a good signature proves: this delivery id, signed at this time. */
export interface VerifiedWebhookSignature {
  deliveryId: string;
  /** The `X-Service-Timestamp` value, unix seconds. */
  timestamp: number;
}

/** All values of a header, looked up case-insensitively. */
function headerValues(headers: IncomingWebhookHeaders, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values;
}

/** The one value of a single-valued header; a repeated header with different values is malformed. */
function singleHeader(headers: IncomingWebhookHeaders, name: string): string {
  const values = [...new Set(headerValues(headers, name).map((v) => v.trim()))];
  const [value] = values;
  if (values.length !== 1 || value === undefined || value === '') {
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      values.length > 1 ? `header ${name} has several values` : `header ${name} is missing`,
    );
  }
  return value;
}

function safeEqual(a: string, b: string): boolean {
  const left = utf8(a);
  const right = utf8(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Checks the V2 signature and the timestamp of a delivery without looking at the body's shape, and
 * returns the delivery id (persist it: a repeat is a no-op) and signing time. Throws
 * `WebhookVerificationError` (`MISSING_HEADERS`, `TIMESTAMP_OUT_OF_TOLERANCE`, `SIGNATURE_MISMATCH`).
 *
 * @example
 * const { deliveryId } = verifyWebhookSignature(rawBody, req.headers, secret);
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  headers: IncomingWebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebhookSignature {
  const key = webhookSecretKey(secret);
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    // The usual mistake: a body already parsed by a JSON middleware. Its bytes are gone; refuse it.
    throw new WebhookVerificationError(
      'INVALID_PAYLOAD',
      'pass the raw body (string or bytes), not parsed JSON',
    );
  }
  const deliveryId = singleHeader(headers, WEBHOOK_HEADERS.deliveryId);
  const timestampText = singleHeader(headers, WEBHOOK_HEADERS.timestamp);
  const signatures = headerValues(headers, WEBHOOK_HEADERS.signature)
    .flatMap((v) => v.split(' '))
    .filter((s) => s !== '');
  if (signatures.length === 0) {
    throw new WebhookVerificationError('MISSING_HEADERS', `header ${WEBHOOK_HEADERS.signature} is missing`);
  }
  if (!isValidDeliveryId(deliveryId)) {
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      `header ${WEBHOOK_HEADERS.deliveryId} is malformed`,
    );
  }
  if (!/^[0-9]{1,15}$/.test(timestampText)) {
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      `header ${WEBHOOK_HEADERS.timestamp} is not unix seconds`,
    );
  }

  const timestamp = Number(timestampText);
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!(Math.abs(now - timestamp) <= tolerance)) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `timestamp ${timestamp} is more than ${tolerance}s from now (${now})`,
      { details: { timestamp, now, toleranceSeconds: tolerance } },
    );
  }

  const expected = hmacV2(key, deliveryId, timestampText, bodyBytes(rawBody));
  // Compare against every v1 entry without stopping early, so timing says nothing about which matched.
  let matched = false;
  for (const entry of signatures) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue; // other schemes (v1a, ...) are not ours
    if (safeEqual(entry.slice(comma + 1), expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError('SIGNATURE_MISMATCH', 'no signature matches this body and secret');
  }
  return { deliveryId, timestamp };
}

/**
 * Verifies a delivery (signature, timestamp within `toleranceSeconds` of `now`) and returns its parsed
 * envelope. Pass the raw body exactly as received, before any JSON parsing. Headers are looked up
 * case-insensitively. Throws `WebhookVerificationError` with `MISSING_HEADERS`,
 * `TIMESTAMP_OUT_OF_TOLERANCE`, `SIGNATURE_MISMATCH` or `INVALID_PAYLOAD`; a malformed secret is a
 * `CodecError` `INVALID_WEBHOOK_SECRET`.
 *
 * @example
 * app.post('/hooks', express.raw({ type: 'application/json' }), (req, res) => {
 *   const event = verifyWebhook(req.body, req.headers, process.env.WEBHOOK_SECRET!);
 *   // event.type, event.data ...
 * });
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: IncomingWebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebhookEnvelope {
  verifyWebhookSignature(rawBody, headers, secret, options);
  let parsed: unknown;
  try {
    const text =
      typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'body is not UTF-8 JSON', { cause });
  }
  const result = verifiedWebhookEnvelopeSchema.safeParse(parsed);
  if (!result.success) {
    throw new WebhookVerificationError(
      'INVALID_PAYLOAD',
      `body is not a delivery envelope: ${result.error.message}`,
      {
        details: { issues: result.error.issues },
      },
    );
  }
  return result.data;
}

/**
 * Verifies the legacy V1 header (`sha256=<hex>` over the raw body alone) in constant time. It has no
 * timestamp, so it cannot stop replays: prefer {@link verifyWebhook}. Throws `WebhookVerificationError`
 * `MISSING_HEADERS` or `SIGNATURE_MISMATCH`.
 *
 * @example
 * verifyLegacyWebhookSignature(rawBody, req.headers, secret);
 */
export function verifyLegacyWebhookSignature(
  rawBody: string | Uint8Array,
  headers: IncomingWebhookHeaders,
  secret: string,
): void {
  const key = webhookSecretKey(secret);
  const header = singleHeader(headers, WEBHOOK_HEADERS.legacySignature);
  if (!header.startsWith('sha256=')) {
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      `header ${WEBHOOK_HEADERS.legacySignature} is malformed`,
    );
  }
  if (!safeEqual(header.slice('sha256='.length).toLowerCase(), hmacV1(key, bodyBytes(rawBody)))) {
    throw new WebhookVerificationError(
      'SIGNATURE_MISMATCH',
      'the V1 signature does not match this body and secret',
    );
  }
}
