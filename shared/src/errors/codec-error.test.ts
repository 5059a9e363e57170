import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../webhooks/errors.js';
import { CodecError, isCodecError } from './codec-error.js';

describe('CodecError', () => {
  it('carries a code, a message, details and the cause', () => {
    const cause = new Error('inner');
    const err = new CodecError('INVALID_GTIN', 'bad GTIN', { details: { gtin: '1' }, cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('CodecError');
    expect(err.code).toBe('INVALID_GTIN');
    expect(err.message).toBe('bad GTIN');
    expect(err.details).toEqual({ gtin: '1' });
    expect(err.cause).toBe(cause);
    expect(new CodecError('INVALID_EPC', 'x').details).toBeUndefined();
  });

  it('isCodecError narrows by class and optionally by code', () => {
    const err = new CodecError('INVALID_SERIAL', 'x');
    expect(isCodecError(err)).toBe(true);
    expect(isCodecError(err, 'INVALID_SERIAL')).toBe(true);
    expect(isCodecError(err, 'INVALID_GTIN')).toBe(false);
    expect(isCodecError(new Error('x'))).toBe(false);
    expect(isCodecError({ code: 'INVALID_SERIAL' })).toBe(false);
  });

  it('WebhookVerificationError is a CodecError with its own name', () => {
    const err = new WebhookVerificationError('SIGNATURE_MISMATCH', 'no');
    expect(err).toBeInstanceOf(CodecError);
    expect(err.name).toBe('WebhookVerificationError');
    expect(isCodecError(err, 'SIGNATURE_MISMATCH')).toBe(true);
  });
});
