import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CodecError } from '../errors/codec-error.js';
import { computeGs1CheckDigit } from '../gs1/gtin.js';
import { decodeLabelEpc, encodeLabelEpc, epcSchemeFor } from './label-epc.js';
import { parseSgtinPureIdentityUri } from './sgtin-uri.js';
import { decodeSgtin198, decodeSgtin198TagUri, encodeSgtin198 } from './sgtin198.js';
import { isSgtin96SafeSerial } from './sgtin96.js';

/** GS1 General Specifications Figure 7.11-1, character set 82. */
const SET_82 = [...'!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz'];
const digit = fc.constantFrom(...'0123456789');
const gtinArb = fc
  .string({ unit: digit, minLength: 13, maxLength: 13 })
  .map((b) => `${b}${computeGs1CheckDigit(b)}`);
const serialArb = fc.string({ unit: fc.constantFrom(...SET_82), minLength: 1, maxLength: 20 });
const inputArb = fc.record({
  gtin: gtinArb,
  serial: serialArb,
  filter: fc.integer({ min: 0, max: 7 }),
  companyPrefixLength: fc.integer({ min: 6, max: 12 }),
});

describe('SGTIN-198 properties', () => {
  it('has 82 characters in set 82', () => {
    expect(new Set(SET_82).size).toBe(82);
  });

  it('round-trips hex, tag URI and pure identity URI', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const epc = encodeSgtin198(input);
        expect(epc.hex).toMatch(/^36[0-9A-F]{50}$/);
        expect(decodeSgtin198(epc.hex)).toEqual(epc);
        expect(decodeSgtin198TagUri(epc.tagUri)).toEqual(epc);
        expect(parseSgtinPureIdentityUri(epc.pureIdentityUri)).toEqual({
          gtin: input.gtin,
          serial: input.serial,
          companyPrefixLength: input.companyPrefixLength,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('carries every set-82 character in every position of a 20-character serial', () => {
    for (let shift = 0; shift < SET_82.length; shift += 20) {
      const serial = Array.from({ length: 20 }, (_, i) => SET_82[(shift + i) % SET_82.length]).join('');
      const epc = encodeSgtin198({ gtin: '80614141123458', serial, companyPrefixLength: 7 });
      expect(decodeSgtin198(epc.hex).serial).toBe(serial);
    }
    for (const ch of SET_82) {
      const serial = ch.repeat(20);
      expect(
        decodeSgtin198(encodeSgtin198({ gtin: '80614141123458', serial, companyPrefixLength: 7 }).hex).serial,
      ).toBe(serial);
    }
  });

  it('escapes exactly the seven GS3A3 characters in the URIs, and nothing else', () => {
    fc.assert(
      fc.property(serialArb, (serial) => {
        const { tagUri, pureIdentityUri } = encodeSgtin198({
          gtin: '80614141123458',
          serial,
          companyPrefixLength: 7,
        });
        for (const uri of [tagUri, pureIdentityUri]) {
          const component = uri
            .split('.')
            .slice(3 - (uri.startsWith('urn:epc:tag') ? 0 : 1))
            .join('.');
          expect(component).not.toMatch(/["&/<>?]/);
          expect(component.replace(/%(22|25|26|2F|3C|3E|3F)/g, '')).not.toContain('%');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any serial of 21 or more characters, or with a character outside set 82', () => {
    const outside = fc
      .integer({ min: 0, max: 0xffff })
      .map((c) => String.fromCharCode(c))
      .filter((c) => !SET_82.includes(c));
    fc.assert(
      fc.property(serialArb, outside, fc.nat({ max: 19 }), (serial, ch, at) => {
        const bad = `${serial.slice(0, at)}${ch}${serial.slice(at)}`.slice(0, 20);
        const long = serial.padEnd(21, 'A');
        for (const s of [bad, long]) {
          expect(() => encodeSgtin198({ gtin: '80614141123458', serial: s, companyPrefixLength: 7 })).toThrow(
            CodecError,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('auto picks SGTIN-96 exactly for SGTIN-96-safe serials, and both schemes round-trip', () => {
    fc.assert(
      fc.property(
        gtinArb,
        fc.oneof(serialArb, fc.bigInt({ min: 0n, max: 2n ** 39n }).map(String)),
        (gtin, serial) => {
          const scheme = epcSchemeFor(serial, 'auto');
          expect(scheme).toBe(isSgtin96SafeSerial(serial) ? 'sgtin-96' : 'sgtin-198');
          const epc = encodeLabelEpc({ gtin, serial, companyPrefixLength: 7, scheme });
          const back = decodeLabelEpc(epc.hex);
          expect([back.scheme, back.gtin, back.serial]).toEqual([scheme, gtin, serial]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
