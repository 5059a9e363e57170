import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeSgtin96 } from '../../shared/src/epc/index.js';
import epcTds from 'epc-tds';
import {
  companyPrefixLengthOf,
  decodeSgtin,
  decodeSgtin198,
  decodeSgtin96,
  gtinCheckDigit,
  sgtinPureIdentityUri,
} from './sgtin.js';

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

describe('SGTIN-198', () => {
  it('decodes the GS1 TDS example EPC, as TDS writes it and as a tag holds it', () => {
    // TDS 2.1 §14.5.1.2 example: urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb
    const tds = '3674257BF7194E59B2C2BF1000000000000000000000000000';
    for (const hex of [tds, `${tds}00`]) {
      expect(decodeSgtin198(hex)).toMatchObject({
        gtin: '80614141123458',
        serial: '32a/b',
        filter: 3,
        companyPrefixLength: 7,
        pureIdentityUri: 'urn:epc:id:sgtin:0614141.812345.32a%2Fb',
      });
      expect(decodeSgtin(hex).serial).toBe('32a/b');
    }
  });

  it('refuses what is not an SGTIN-198', () => {
    const tds = '3674257BF7194E59B2C2BF1000000000000000000000000000';
    expect(() => decodeSgtin198(`30${tds.slice(2)}`)).toThrow(/header/);
    expect(() => decodeSgtin198(tds.slice(0, 48))).toThrow(/198 bits/);
    expect(() => decodeSgtin198(`${tds.slice(0, 49)}1`)).toThrow(/past its 198th/);
    // Its second character ('2') zeroed: a zero must be padding that runs to the end.
    const v = BigInt(`0x${tds}`) & ~(0x7fn << BigInt(200 - 58 - 14));
    expect(() => decodeSgtin198(v.toString(16).toUpperCase())).toThrow(/padded with zeros/);
    // The serial's first character is 0x7F (DEL), outside character set 82.
    expect(() => decodeSgtin198('3674257BF7194E5FC00000000000000000000000000000000000')).toThrow(/set 82/);
  });

  it('agrees with epc-tds on 300 random alphanumeric serials', () => {
    const set82 = [...'!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz'];
    fc.assert(
      fc.property(
        fc.integer({ min: 6, max: 12 }),
        fc.stringMatching(/^\d{13}$/),
        fc.array(fc.constantFrom(...set82), { minLength: 1, maxLength: 20 }).map((c) => c.join('')),
        fc.integer({ min: 0, max: 7 }),
        (cpLength, body, serial, filter) => {
          const gtin = body + gtinCheckDigit(body);
          const oracle = new epcTds.Sgtin198()
            .setFilter(filter)
            .setPartition(12 - cpLength)
            .setGtin(gtin)
            .setSerial(serial);
          const decoded = decodeSgtin198(`${oracle.toHexString()}00`);
          expect(decoded).toEqual({
            gtin,
            serial,
            companyPrefixLength: cpLength,
            filter,
            pureIdentityUri: sgtinPureIdentityUri(gtin, serial, cpLength),
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
