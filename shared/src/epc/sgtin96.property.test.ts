import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { computeGs1CheckDigit } from '../gs1/gtin.js';
import { decodeSgtin96, decodeSgtin96TagUri, encodeSgtin96 } from './sgtin96.js';

const digit = fc.constantFrom(...'0123456789');

/** A valid GTIN of any of the four lengths. */
const gtinArb = fc
  .constantFrom(7, 11, 12, 13)
  .chain((n) => fc.string({ unit: digit, minLength: n, maxLength: n }))
  .map((body) => `${body}${computeGs1CheckDigit(body)}`);

/** A serial an SGTIN-96 can carry, biased toward both ends of the range. */
const serialArb = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 2n ** 38n - 1n }),
    fc.constantFrom(0n, 1n, 9n, 10n, 2n ** 38n - 2n, 2n ** 38n - 1n),
  )
  .map((n) => n.toString());

const inputArb = fc.record({
  gtin: gtinArb,
  serial: serialArb,
  filter: fc.integer({ min: 0, max: 7 }),
  companyPrefixLength: fc.integer({ min: 6, max: 12 }),
});

describe('SGTIN-96 properties', () => {
  it('encode then decode gives the same GTIN-14, serial, filter and prefix length', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const encoded = encodeSgtin96(input);
        expect(encoded.hex).toMatch(/^30[0-9A-F]{22}$/);
        const decoded = decodeSgtin96(encoded.hex);
        expect(decoded).toEqual(encoded);
        expect(decoded.gtin).toBe(input.gtin.padStart(14, '0'));
        expect(decoded.serial).toBe(input.serial);
        expect(decoded.filter).toBe(input.filter);
        expect(decoded.companyPrefixLength).toBe(input.companyPrefixLength);
        expect(decodeSgtin96TagUri(encoded.tagUri)).toEqual(encoded);
      }),
      { numRuns: 1000 },
    );
  });

  it('decode then encode gives back any decodable hex', () => {
    fc.assert(
      fc.property(inputArb, fc.bigInt({ min: 0n, max: 2n ** 38n - 1n }), (input, noise) => {
        // Flip the serial bits of a valid EPC to random values: still decodable, must re-encode identically.
        const valid = BigInt(`0x${encodeSgtin96(input).hex}`);
        const hex = ((valid & ~(2n ** 38n - 1n)) | noise).toString(16).toUpperCase().padStart(24, '0');
        expect(encodeSgtin96(decodeSgtin96(hex)).hex).toBe(hex);
      }),
    );
  });
});
