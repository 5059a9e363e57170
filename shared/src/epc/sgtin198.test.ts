import { describe, expect, it } from 'vitest';
import { CodecError } from '../errors/codec-error.js';
import { decodeLabelEpc, encodeLabelEpc, epcSchemeFor } from './label-epc.js';
import { decodeSgtin198, decodeSgtin198TagUri, encodeSgtin198 } from './sgtin198.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

/**
 * TDS 1.13 Annex E example of SGTIN-198: `urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb`, binary
 * `3674257BF7194E59B2C2BF1` followed by zero bits (here padded to 13 words).
 */
const TDS_HEX = '3674257BF7194E59B2C2BF10000000000000000000000000' + '0000';

describe('SGTIN-198', () => {
  it('encodes the TDS example to 52 hex digits with the GS3A3-escaped URIs', () => {
    expect(
      encodeSgtin198({ gtin: '80614141123458', serial: '32a/b', filter: 3, companyPrefixLength: 7 }),
    ).toEqual({
      hex: TDS_HEX,
      tagUri: 'urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb',
      pureIdentityUri: 'urn:epc:id:sgtin:0614141.812345.32a%2Fb',
      gtin: '80614141123458',
      serial: '32a/b',
      filter: 3,
      companyPrefixLength: 7,
    });
  });

  it('decodes the TDS example, in either case', () => {
    for (const hex of [TDS_HEX, TDS_HEX.toLowerCase()]) {
      const epc = decodeSgtin198(hex);
      expect(epc).toMatchObject({ hex: TDS_HEX, gtin: '80614141123458', serial: '32a/b', filter: 3 });
      expect(epc.companyPrefixLength).toBe(7);
    }
  });

  it('decodes the tag URI of the TDS example', () => {
    expect(decodeSgtin198TagUri('urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb').hex).toBe(TDS_HEX);
  });

  it('writes a 20-character serial in all 140 bits, 7 bits a character', () => {
    const serial = 'ABCDEFGHIJKLMNOPQRST';
    const epc = encodeSgtin198({ gtin: '80614141123458', serial, companyPrefixLength: 7 });
    const bits = (BigInt(`0x${epc.hex}`) >> 10n) & ((1n << 140n) - 1n);
    expect(bits.toString(2).padStart(140, '0')).toBe(
      [...serial].map((c) => c.charCodeAt(0).toString(2).padStart(7, '0')).join(''),
    );
    expect(decodeSgtin198(epc.hex).serial).toBe(serial);
  });

  it('refuses serials that are not AI (21) serials', () => {
    const encode = (serial: string) => () =>
      encodeSgtin198({ gtin: '80614141123458', serial, companyPrefixLength: 7 });
    expect(codeOf(encode('A'.repeat(21)))).toBe('INVALID_SERIAL');
    expect(codeOf(encode(''))).toBe('INVALID_SERIAL');
    for (const ch of [' ', '#', '$', '@', '~', '\u00e9', '\n', '`', '[', '{', '|', '\\']) {
      expect(codeOf(encode(`A${ch}1`)), JSON.stringify(ch)).toBe('INVALID_SERIAL');
    }
  });

  it('refuses a bad filter, GTIN or company prefix length', () => {
    const base = { gtin: '80614141123458', serial: 'A1', companyPrefixLength: 7 };
    expect(codeOf(() => encodeSgtin198({ ...base, filter: 8 }))).toBe('INVALID_FILTER');
    expect(codeOf(() => encodeSgtin198({ ...base, gtin: '80614141123459' }))).toBe('INVALID_GTIN');
    expect(codeOf(() => encodeSgtin198({ ...base, companyPrefixLength: 5 }))).toBe(
      'INVALID_COMPANY_PREFIX_LENGTH',
    );
  });

  it('refuses malformed hex: length, digits, header, partition, padding, serial bits', () => {
    const bad = [
      TDS_HEX.slice(0, 50), // 200 bits, not whole words of 208
      `${TDS_HEX}0000`,
      `${TDS_HEX.slice(0, 51)}G`,
      `30${TDS_HEX.slice(2)}`, // SGTIN-96 header
      `${TDS_HEX.slice(0, 51)}1`, // a pad bit set
      // partition 7: filter 3 (011) partition 7 (111) → bits 011111xx
      `367C${TDS_HEX.slice(4)}`,
      // a character after the terminating zero of the serial: bits set in the last serial character
      `${TDS_HEX.slice(0, 46)}0400`.padEnd(52, '0'),
    ];
    for (const hex of bad)
      expect(
        codeOf(() => decodeSgtin198(hex)),
        hex,
      ).toBe('INVALID_EPC');
    // A serial field of all zero bits is an empty serial.
    const empty = encodeSgtin198({ gtin: '80614141123458', serial: 'A', companyPrefixLength: 7 }).hex;
    const zeroed = (BigInt(`0x${empty}`) & ~(((1n << 140n) - 1n) << 10n)).toString(16).toUpperCase();
    expect(codeOf(() => decodeSgtin198(zeroed))).toBe('INVALID_EPC');
    // A 7-bit code outside set 82 (0x20 space).
    const spaced = (BigInt(`0x${empty}`) ^ ((0x41n ^ 0x20n) << 143n)).toString(16).toUpperCase();
    expect(codeOf(() => decodeSgtin198(spaced))).toBe('INVALID_EPC');
  });

  it('refuses malformed tag URIs', () => {
    for (const uri of [
      'urn:epc:tag:sgtin-96:3.0614141.812345.6789',
      'urn:epc:tag:sgtin-198:8.0614141.812345.A',
      'urn:epc:tag:sgtin-198:3.0614141.81234.A',
    ]) {
      expect(
        codeOf(() => decodeSgtin198TagUri(uri)),
        uri,
      ).toBe('INVALID_EPC');
    }
    expect(codeOf(() => decodeSgtin198TagUri('urn:epc:tag:sgtin-198:3.0614141.812345.a/b'))).toBe(
      'INVALID_SERIAL',
    );
  });
});

describe('label EPC', () => {
  it('picks SGTIN-96 when the serial fits, SGTIN-198 otherwise, or as the product says', () => {
    expect(epcSchemeFor('6789', 'auto')).toBe('sgtin-96');
    expect(epcSchemeFor('06789', 'auto')).toBe('sgtin-198');
    expect(epcSchemeFor('274877906944', 'auto')).toBe('sgtin-198');
    expect(epcSchemeFor('AB-1', 'auto')).toBe('sgtin-198');
    expect(epcSchemeFor('6789', 'sgtin-198')).toBe('sgtin-198');
    expect(epcSchemeFor('6789', 'sgtin-96')).toBe('sgtin-96');
    expect(codeOf(() => epcSchemeFor('AB-1', 'sgtin-96'))).toBe('SERIAL_NOT_SGTIN96');
  });

  it('encodes and decodes either scheme, dispatching on the header', () => {
    const base = { gtin: '80614141123458', companyPrefixLength: 7, filter: 3 };
    const e96 = encodeLabelEpc({ ...base, serial: '6789', scheme: 'sgtin-96' });
    expect(e96).toEqual({ scheme: 'sgtin-96', hex: '3074257BF7194E4000001A85' });
    expect(decodeLabelEpc(e96.hex)).toMatchObject({ scheme: 'sgtin-96', serial: '6789' });
    const e198 = encodeLabelEpc({ ...base, serial: '32a/b', scheme: 'sgtin-198' });
    expect(e198).toEqual({ scheme: 'sgtin-198', hex: TDS_HEX });
    expect(decodeLabelEpc(e198.hex)).toMatchObject({ scheme: 'sgtin-198', serial: '32a/b' });
    expect(codeOf(() => decodeLabelEpc('3574257BF7194E4000001A85'))).toBe('INVALID_EPC');
    expect(codeOf(() => decodeLabelEpc(''))).toBe('INVALID_EPC');
    expect(codeOf(() => encodeLabelEpc({ ...base, serial: 'AB', scheme: 'sgtin-96' }))).toBe(
      'INVALID_SERIAL',
    );
  });
});
