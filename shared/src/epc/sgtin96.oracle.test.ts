/**
 * Compares our SGTIN-96 codec with the `epc-tds` npm package on random valid input. epc-tds is only an
 * oracle here: it accepts bad input silently (no check-digit or range checks), so it is not our codec.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import tds from 'epc-tds';
import { computeGs1CheckDigit } from '../gs1/gtin.js';
import { decodeSgtin96, encodeSgtin96 } from './sgtin96.js';

const digit = fc.constantFrom(...'0123456789');
const inputArb = fc.record({
  gtin: fc.string({ unit: digit, minLength: 13, maxLength: 13 }).map((b) => `${b}${computeGs1CheckDigit(b)}`),
  // epc-tds keeps the serial in a JS number; every 38-bit value is exact in a double.
  serial: fc.integer({ min: 0, max: 2 ** 38 - 1 }),
  filter: fc.integer({ min: 0, max: 7 }),
  companyPrefixLength: fc.integer({ min: 6, max: 12 }),
});

describe('SGTIN-96 against epc-tds', () => {
  it('agrees on hex, tag URI, pure identity URI and GTIN for 400 random inputs', () => {
    fc.assert(
      fc.property(inputArb, ({ gtin, serial, filter, companyPrefixLength }) => {
        const oracle = new tds.Sgtin96()
          .setFilter(filter)
          .setPartition(12 - companyPrefixLength)
          .setGtin(gtin)
          .setSerial(serial);
        const ours = encodeSgtin96({ gtin, serial: String(serial), filter, companyPrefixLength });
        expect(ours.hex).toBe(oracle.toHexString());
        expect(ours.tagUri).toBe(oracle.toTagURI());
        expect(ours.pureIdentityUri).toBe(oracle.toIdURI());

        const reread = new tds.Sgtin96(ours.hex);
        const decoded = decodeSgtin96(ours.hex);
        expect(decoded.gtin).toBe(reread.getGtin());
        expect(decoded.serial).toBe(String(reread.getSerial()));
        expect(decoded.filter).toBe(reread.getFilter());
        expect(decoded.companyPrefixLength).toBe(12 - reread.getPartition());
      }),
      { numRuns: 400 },
    );
  });
});
