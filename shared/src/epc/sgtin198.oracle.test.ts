/**
 * Compares our SGTIN-198 codec with the `epc-tds` npm package on random valid input. epc-tds writes the 198
 * bits as 50 hex digits (200 bits) where we write whole 16-bit words (52), and its URIs do not escape the
 * serial (TDS §5 requires it), so those are compared after escaping; it is only an oracle here.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import tds from 'epc-tds';
import { computeGs1CheckDigit } from '../gs1/gtin.js';
import { escapeGs3a3 } from './sgtin-uri.js';
import { decodeSgtin198, encodeSgtin198 } from './sgtin198.js';

const digit = fc.constantFrom(...'0123456789');
const SET_82 = [...'!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz'];
const inputArb = fc.record({
  gtin: fc.string({ unit: digit, minLength: 13, maxLength: 13 }).map((b) => `${b}${computeGs1CheckDigit(b)}`),
  serial: fc.string({ unit: fc.constantFrom(...SET_82), minLength: 1, maxLength: 20 }),
  filter: fc.integer({ min: 0, max: 7 }),
  companyPrefixLength: fc.integer({ min: 6, max: 12 }),
});

/** The URI epc-tds writes, with its serial (the last dot-separated part) escaped as TDS §5 requires. */
function escapedUri(uri: string, serial: string): string {
  expect(uri.endsWith(`.${serial}`)).toBe(true);
  return `${uri.slice(0, uri.length - serial.length)}${escapeGs3a3(serial)}`;
}

describe('SGTIN-198 against epc-tds', () => {
  it('agrees on the bits, tag URI, pure identity URI and GTIN for 400 random inputs', () => {
    fc.assert(
      fc.property(inputArb, ({ gtin, serial, filter, companyPrefixLength }) => {
        const oracle = new tds.Sgtin198()
          .setFilter(filter)
          .setPartition(12 - companyPrefixLength)
          .setGtin(gtin)
          .setSerial(serial);
        const ours = encodeSgtin198({ gtin, serial, filter, companyPrefixLength });
        expect(ours.hex).toHaveLength(52);
        // 200 bits from epc-tds, 208 from us: the same 198, then zero bits.
        expect(BigInt(`0x${ours.hex}`) >> 10n).toBe(BigInt(`0x${oracle.toHexString()}`) >> 2n);
        expect(ours.tagUri).toBe(escapedUri(oracle.toTagURI(), serial));
        expect(ours.pureIdentityUri).toBe(escapedUri(oracle.toIdURI(), serial));

        const reread = new tds.Sgtin198(`${ours.hex.slice(0, 50)}`);
        const decoded = decodeSgtin198(ours.hex);
        expect(decoded.gtin).toBe(reread.getGtin());
        expect(decoded.serial).toBe(reread.getSerial());
        expect(decoded.filter).toBe(reread.getFilter());
        expect(decoded.companyPrefixLength).toBe(12 - reread.getPartition());
      }),
      { numRuns: 400 },
    );
  });
});
