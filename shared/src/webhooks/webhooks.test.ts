import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { WebhookVerificationError } from './errors.js';
import { generateWebhookSecret, webhookSecretKey } from './secret.js';
import { signWebhook } from './sign.js';
import { verifyLegacyWebhookSignature, verifyWebhook, verifyWebhookSignature } from './verify.js';

const vectors = z
  .object({
    vectors: z.array(
      z.object({
        secret: z.string(),
        id: z.string(),
        timestamp: z.number(),
        body: z.string(),
        signature: z.string(),
      }),
    ),
  })
  .parse(readVectorJson('webhooks.json'));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.code;
    return err instanceof CodecError ? `codec:${err.code}` : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const T0 = 1_700_000_000;
const at = (seconds: number): Date => new Date(seconds * 1000);

function envelope(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: randomUUID(),
    type: 'print.confirmed',
    timestamp: '2026-11-02T10:00:00.000Z',
    apiVersion: '2026-11-01',
    data: { serials: ['1', '2'] },
    ...overrides,
  });
}

describe('Standard Webhooks vector (webhooks.json)', () => {
  it.each(vectors.vectors)('signs $id exactly like the reference library', (v) => {
    const headers = signWebhook({ id: v.id, timestamp: v.timestamp, body: v.body, secret: v.secret });
    expect(headers['X-Service-Signature-V2']).toBe(v.signature);
    expect(headers['X-Service-Timestamp']).toBe(String(v.timestamp));
    expect(headers['X-Service-Delivery-Id']).toBe(v.id);
  });

  it.each(vectors.vectors)('verifies $id with the vector signature (string and bytes)', (v) => {
    const headers = {
      'x-service-delivery-id': v.id,
      'x-service-timestamp': String(v.timestamp),
      'x-service-signature-v2': v.signature,
    };
    const options = { now: at(v.timestamp + 10) };
    expect(verifyWebhookSignature(v.body, headers, v.secret, options)).toEqual({
      deliveryId: v.id,
      timestamp: v.timestamp,
    });
    expect(
      verifyWebhookSignature(new TextEncoder().encode(v.body), headers, v.secret, options).deliveryId,
    ).toBe(v.id);
    // The signature is good; the vector body is not one of our envelopes, so the full check says so.
    expect(codeOf(() => verifyWebhook(v.body, headers, v.secret, options))).toBe('INVALID_PAYLOAD');
    // One changed byte of the body breaks it.
    expect(codeOf(() => verifyWebhookSignature(v.body.replace('2', '3'), headers, v.secret, options))).toBe(
      'SIGNATURE_MISMATCH',
    );
  });
});

describe('signWebhook', () => {
  it('sends the legacy V1 header as sha256=<hex HMAC of the body alone> with the decoded key', () => {
    const body = envelope();
    const headers = signWebhook({ id: 'dlv_1', timestamp: T0, body, secret: SECRET });
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    expect(headers['X-Service-Signature']).toBe(
      `sha256=${createHmac('sha256', key).update(body).digest('hex')}`,
    );
    expect(() => verifyLegacyWebhookSignature(body, headers, SECRET)).not.toThrow();
    expect(codeOf(() => verifyLegacyWebhookSignature(`${body} `, headers, SECRET))).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['bad base64', 'whsec_not base64!'],
    ['empty key', 'whsec_'],
    ['url-safe alphabet', 'whsec_ab-_'],
  ])('rejects a secret with %s', (_label, secret) => {
    expect(codeOf(() => signWebhook({ id: 'd', timestamp: T0, body: '{}', secret }))).toBe(
      'codec:INVALID_WEBHOOK_SECRET',
    );
  });

  it.each([
    ['a dot in the id', { id: 'a.b' }],
    ['an empty id', { id: '' }],
    ['a fractional timestamp', { timestamp: 1.5 }],
    ['a negative timestamp', { timestamp: -1 }],
  ])('rejects %s', (_label, override) => {
    expect(
      codeOf(() => signWebhook({ id: 'd', timestamp: T0, body: '{}', secret: SECRET, ...override })),
    ).toBe('codec:INVALID_WEBHOOK_INPUT');
  });
});

describe('verifyWebhook', () => {
  const body = envelope();
  const signed = signWebhook({ id: 'dlv_42', timestamp: T0, body, secret: SECRET });

  it('returns the parsed envelope for a good delivery, header names in any case', () => {
    const mixedCase = {
      'x-SERVICE-delivery-ID': signed['X-Service-Delivery-Id'],
      'X-SERVICE-TIMESTAMP': signed['X-Service-Timestamp'],
      'x-service-signature-v2': [signed['X-Service-Signature-V2']],
      'content-type': 'application/json',
    };
    const parsed = verifyWebhook(body, mixedCase, SECRET, { now: at(T0) });
    expect(parsed).toEqual(JSON.parse(body));
  });

  it('accepts a timestamp exactly at the tolerance, in both directions, and refuses one second beyond', () => {
    expect(verifyWebhook(body, signed, SECRET, { now: at(T0 + 300) }).type).toBe('print.confirmed');
    expect(verifyWebhook(body, signed, SECRET, { now: at(T0 - 300) }).type).toBe('print.confirmed');
    expect(codeOf(() => verifyWebhook(body, signed, SECRET, { now: at(T0 + 301) }))).toBe(
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    expect(codeOf(() => verifyWebhook(body, signed, SECRET, { now: at(T0 - 301) }))).toBe(
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    expect(verifyWebhook(body, signed, SECRET, { now: at(T0 + 3000), toleranceSeconds: 3600 }).type).toBe(
      'print.confirmed',
    );
  });

  it('refuses a signature replayed with a fresh timestamp', () => {
    const replay = { ...signed, 'X-Service-Timestamp': String(T0 + 1000) };
    expect(codeOf(() => verifyWebhook(body, replay, SECRET, { now: at(T0 + 1000) }))).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it('refuses a signature moved to another delivery id', () => {
    const moved = { ...signed, 'X-Service-Delivery-Id': 'dlv_43' };
    expect(codeOf(() => verifyWebhook(body, moved, SECRET, { now: at(T0) }))).toBe('SIGNATURE_MISMATCH');
  });

  it('accepts any one of several signatures during a rotation, and none with the wrong secret', () => {
    const next = generateWebhookSecret();
    const withNext = signWebhook({ id: 'dlv_42', timestamp: T0, body, secret: next });
    const both = {
      ...signed,
      'X-Service-Signature-V2': `v1,AAAA ${withNext['X-Service-Signature-V2']}  v1a,ignored ${signed['X-Service-Signature-V2']}`,
    };
    expect(verifyWebhook(body, both, SECRET, { now: at(T0) }).type).toBe('print.confirmed');
    expect(verifyWebhook(body, both, next, { now: at(T0) }).type).toBe('print.confirmed');
    expect(codeOf(() => verifyWebhook(body, both, generateWebhookSecret(), { now: at(T0) }))).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it('ignores signature schemes other than v1', () => {
    const sig = signed['X-Service-Signature-V2'].slice('v1,'.length);
    const other = { ...signed, 'X-Service-Signature-V2': `v2,${sig} ${sig}` };
    expect(codeOf(() => verifyWebhook(body, other, SECRET, { now: at(T0) }))).toBe('SIGNATURE_MISMATCH');
  });

  it.each([
    ['no delivery id', { 'X-Service-Delivery-Id': undefined }],
    ['no timestamp', { 'X-Service-Timestamp': undefined }],
    ['no signature', { 'X-Service-Signature-V2': undefined }],
    ['blank signature', { 'X-Service-Signature-V2': '   ' }],
    ['timestamp in milliseconds with a dot', { 'X-Service-Timestamp': `${T0}.000` }],
    ['negative timestamp', { 'X-Service-Timestamp': `-${T0}` }],
    ['two different delivery ids', { 'X-Service-Delivery-Id': ['dlv_42', 'dlv_43'] }],
    ['delivery id with a dot', { 'X-Service-Delivery-Id': 'dlv.42' }],
  ])('refuses %s with MISSING_HEADERS', (_label, override) => {
    expect(codeOf(() => verifyWebhook(body, { ...signed, ...override }, SECRET, { now: at(T0) }))).toBe(
      'MISSING_HEADERS',
    );
  });

  it('refuses a well-signed body that is not an envelope', () => {
    const cases = [
      'not json',
      '[]',
      envelope({ id: 'evt_1' }),
      envelope({ type: '' }),
      envelope({ timestamp: 'yesterday' }),
      envelope({ apiVersion: 'v2' }),
      envelope({ data: 'x' }),
      envelope({ data: undefined }),
    ];
    for (const bad of cases) {
      const headers = signWebhook({ id: 'dlv_1', timestamp: T0, body: bad, secret: SECRET });
      expect(codeOf(() => verifyWebhook(bad, headers, SECRET, { now: at(T0) }))).toBe('INVALID_PAYLOAD');
    }
    const notUtf8 = new Uint8Array([0x7b, 0xff, 0x7d]);
    const headers = signWebhook({ id: 'dlv_1', timestamp: T0, body: notUtf8, secret: SECRET });
    expect(codeOf(() => verifyWebhook(notUtf8, headers, SECRET, { now: at(T0) }))).toBe('INVALID_PAYLOAD');
  });

  it('refuses a body that was already parsed, since its raw bytes are gone', () => {
    const parsed = JSON.parse(body) as unknown as string;
    expect(codeOf(() => verifyWebhook(parsed, signed, SECRET, { now: at(T0) }))).toBe('INVALID_PAYLOAD');
  });

  it('round-trips any body, id and secret (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        (data, id, keyBytes) => {
          const secret = `whsec_${Buffer.from(keyBytes).toString('base64')}`;
          const raw = envelope({ data: { note: data } });
          const headers = signWebhook({ id, timestamp: T0, body: raw, secret });
          expect(verifyWebhook(raw, headers, secret, { now: at(T0) }).data).toEqual({ note: data });
        },
      ),
    );
  });
});

describe('generateWebhookSecret', () => {
  it('makes distinct whsec_ secrets with a 32-byte key', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(webhookSecretKey(a)).toHaveLength(32);
  });
});
