import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeSgtin96 } from '../../shared/src/epc/index.js';
import { companyPrefixLengthOf, decodeSgtin96, gtinCheckDigit, sgtinPureIdentityUri } from './sgtin.js';

describe('SGTIN-96', () => {
  it('decodes the GS1 TDS example EPC', () => {
    // TDS 2.1 §14.5.1 example: urn:epc:tag:sgtin-96:3.0614141.812345.6789
    expect(decodeSgtin96('3074257BF7194E4000001A85')).toMatchObject({
      gtin: '80614141123458',
      serial: '6789',
      filter: 3,
      companyPrefixLength: 7,
      pureIdentityUri: 'urn:epc:id:sgtin:0614141.812345.6789',
    });
  });

  it('refuses what is not an SGTIN-96', () => {
    expect(() => decodeSgtin96('3574257BF7194E4000001A85')).toThrow(/header/);
    expect(() => decodeSgtin96('307C257BF7194E4000001A85')).toThrow(/partition 7/);
    expect(() => decodeSgtin96('3074257BF7194E4000001A8')).toThrow(/96 bits/);
  });

  it('agrees with the control plane encoder for every partition (the shared package as an oracle)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 6, max: 12 }),
        fc.stringMatching(/^\d{13}$/),
        fc.bigInt({ min: 0n, max: 274877906943n }),
        fc.integer({ min: 0, max: 7 }),
        (cpLength, body, serial, filter) => {
          const gtin = body + gtinCheckDigit(body);
          const encoded = encodeSgtin96({
            gtin,
            serial: serial.toString(),
            companyPrefixLength: cpLength,
            filter,
          });
          const decoded = decodeSgtin96(encoded.hex);
          expect(decoded).toEqual({
            gtin,
            serial: serial.toString(),
            companyPrefixLength: cpLength,
            filter,
            pureIdentityUri: encoded.pureIdentityUri,
          });
          expect(sgtinPureIdentityUri(gtin, serial.toString(), cpLength)).toBe(encoded.pureIdentityUri);
          expect(companyPrefixLengthOf(encoded.pureIdentityUri)).toBe(cpLength);
        },
      ),
    );
  });

  it('escapes the serial characters a pure-identity URI must percent-encode', () => {
    expect(sgtinPureIdentityUri('09506000134352', 'A/B%1', 7)).toBe(
      'urn:epc:id:sgtin:9506000.013435.A%2FB%251',
    );
  });
});
