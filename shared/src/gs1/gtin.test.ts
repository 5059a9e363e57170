import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { computeGs1CheckDigit, isValidGtin, normalizeGtin } from './gtin.js';

const vectors = z
  .object({
    gtinCheckDigit: z.array(
      z.object({ gtin: z.string(), valid: z.boolean(), gtin14: z.string().optional() }),
    ),
  })
  .parse(readVectorJson('gs1-digital-link.json'));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('GTIN vectors (gs1-digital-link.json)', () => {
  it.each(vectors.gtinCheckDigit)('$gtin valid=$valid', ({ gtin, valid, gtin14 }) => {
    expect(isValidGtin(gtin)).toBe(valid);
    if (valid) {
      expect(normalizeGtin(gtin)).toBe(gtin14 ?? gtin.padStart(14, '0'));
    } else {
      expect(codeOf(() => normalizeGtin(gtin))).toBe('INVALID_GTIN');
    }
  });
});

describe('computeGs1CheckDigit', () => {
  it('computes the GS1 General Specifications worked examples', () => {
    expect(computeGs1CheckDigit('9501093')).toBe(9);
    expect(computeGs1CheckDigit('629104150021')).toBe(3); // GTIN-13 6291041500213
    expect(computeGs1CheckDigit('8061414112345')).toBe(8);
    expect(computeGs1CheckDigit('0000000000000')).toBe(0);
  });

  it('rejects non-digits and over-long input', () => {
    expect(codeOf(() => computeGs1CheckDigit(''))).toBe('INVALID_GTIN');
    expect(codeOf(() => computeGs1CheckDigit('12a4'))).toBe('INVALID_GTIN');
    expect(codeOf(() => computeGs1CheckDigit('1'.repeat(18)))).toBe('INVALID_GTIN');
  });

  it('detects every single-digit substitution (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 13, maxLength: 13 }),
        fc.nat({ max: 12 }),
        fc.integer({ min: 1, max: 9 }),
        (body, position, delta) => {
          const gtin = `${body}${computeGs1CheckDigit(body)}`;
          const changed = (Number(gtin[position]) + delta) % 10;
          const mutated = `${gtin.slice(0, position)}${changed}${gtin.slice(position + 1)}`;
          expect(isValidGtin(gtin)).toBe(true);
          expect(isValidGtin(mutated)).toBe(false);
        },
      ),
    );
  });
});

describe('isValidGtin / normalizeGtin', () => {
  it('accepts the four GTIN lengths and pads to 14 digits', () => {
    expect(normalizeGtin('95010939')).toBe('00000095010939');
    expect(normalizeGtin('012345678905')).toBe('00012345678905');
    expect(normalizeGtin('4006381333931')).toBe('04006381333931');
    expect(normalizeGtin('80614141123458')).toBe('80614141123458');
  });

  it.each([
    ['empty', ''],
    ['9 digits', '950109390'],
    ['10 digits', '9501093901'],
    ['15 digits', '080614141123458'],
    ['letters', '9501093A'],
    ['spaces', ' 95010939'],
    ['sign', '+95010939'],
    ['unicode digits', '٩٥٠١٠٩٣٩'],
  ])('rejects %s', (_label, gtin) => {
    expect(isValidGtin(gtin)).toBe(false);
    expect(codeOf(() => normalizeGtin(gtin))).toBe('INVALID_GTIN');
  });

  it('rejects non-strings from untyped callers', () => {
    expect(isValidGtin(12345678 as unknown as string)).toBe(false);
    expect(codeOf(() => normalizeGtin(undefined as unknown as string))).toBe('INVALID_GTIN');
  });

  it('puts the offending GTIN in the error details', () => {
    try {
      normalizeGtin('80614141123459');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CodecError);
      expect((err as CodecError).details).toEqual({ gtin: '80614141123459' });
      expect((err as CodecError).message).toMatch(/expected 8/);
    }
  });
});
