import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { decodeSgtin96, decodeSgtin96TagUri, encodeSgtin96, isSgtin96SafeSerial } from './sgtin96.js';

const vectors = z
  .object({
    vectors: z.array(
      z.object({
        gtin: z.string(),
        serial: z.string(),
        filter: z.number(),
        companyPrefixLength: z.number(),
        hex: z.string(),
        tagUri: z.string(),
        source: z.string(),
      }),
    ),
    invalid: z.array(z.object({ gtin: z.string(), serial: z.string(), why: z.string() })),
  })
  .parse(readVectorJson('sgtin96.json'));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

/** The pure identity URI a tag URI implies: drop the scheme and the filter (TDS §12 vs §6.3.1). */
function pureFromTag(tagUri: string): string {
  return tagUri.replace(/^urn:epc:tag:sgtin-96:[0-7]\./, 'urn:epc:id:sgtin:');
}

describe('SGTIN-96 vectors (sgtin96.json)', () => {
  it.each(vectors.vectors)('encodes $gtin/$serial ($source)', (v) => {
    const epc = encodeSgtin96({
      gtin: v.gtin,
      serial: v.serial,
      filter: v.filter,
      companyPrefixLength: v.companyPrefixLength,
    });
    expect(epc).toEqual({
      hex: v.hex,
      tagUri: v.tagUri,
      pureIdentityUri: pureFromTag(v.tagUri),
      gtin: v.gtin,
      serial: v.serial,
      filter: v.filter,
      companyPrefixLength: v.companyPrefixLength,
    });
  });

  it.each(vectors.vectors)('decodes $hex ($source)', (v) => {
    const expected = {
      hex: v.hex,
      tagUri: v.tagUri,
      pureIdentityUri: pureFromTag(v.tagUri),
      gtin: v.gtin,
      serial: v.serial,
      filter: v.filter,
      companyPrefixLength: v.companyPrefixLength,
    };
    expect(decodeSgtin96(v.hex)).toEqual(expected);
    expect(decodeSgtin96(v.hex.toLowerCase())).toEqual(expected);
    expect(decodeSgtin96TagUri(v.tagUri)).toEqual(expected);
  });

  const expectedCodes: Record<string, string> = {
    '80614141123458/274877906944': 'SERIAL_OUT_OF_RANGE',
    '80614141123458/06789': 'INVALID_SERIAL',
    '80614141123459/1': 'INVALID_GTIN',
  };
  it.each(vectors.invalid)('rejects $gtin/$serial: $why', ({ gtin, serial }) => {
    const code = codeOf(() => encodeSgtin96({ gtin, serial, companyPrefixLength: 7 }));
    const expected = expectedCodes[`${gtin}/${serial}`];
    if (expected === undefined) {
      // A row added to the vectors later: at least a typed codec error.
      expect(code).toMatch(/^(INVALID_GTIN|INVALID_SERIAL|SERIAL_OUT_OF_RANGE)$/);
    } else {
      expect(code).toBe(expected);
    }
  });
});

describe('encodeSgtin96', () => {
  const base = { gtin: '80614141123458', serial: '6789', companyPrefixLength: 7 };

  it('defaults the filter to 1 (point of sale trade item)', () => {
    expect(encodeSgtin96(base).hex).toBe('3034257BF7194E4000001A85');
    expect(encodeSgtin96(base).filter).toBe(1);
  });

  it('accepts GTIN-8/12/13 and normalises them', () => {
    const epc = encodeSgtin96({ gtin: '95010939', serial: '1', companyPrefixLength: 7 });
    expect(epc.gtin).toBe('00000095010939');
    expect(epc.pureIdentityUri).toBe('urn:epc:id:sgtin:0000095.001093.1');
    expect(decodeSgtin96(epc.hex).gtin).toBe('00000095010939');
  });

  it('encodes the serial bounds 0 and 2^38 - 1 in the low 38 bits', () => {
    const serialBits = (hex: string): bigint => BigInt(`0x${hex}`) & ((1n << 38n) - 1n);
    expect(serialBits(encodeSgtin96({ ...base, serial: '0' }).hex)).toBe(0n);
    const max = encodeSgtin96({ ...base, serial: '274877906943' });
    expect(serialBits(max.hex)).toBe(2n ** 38n - 1n);
    expect(decodeSgtin96(max.hex).serial).toBe('274877906943');
  });

  it.each([
    ['letters', 'A1', 'INVALID_SERIAL'],
    ['empty', '', 'INVALID_SERIAL'],
    ['leading zero', '01', 'INVALID_SERIAL'],
    ['sign', '+1', 'INVALID_SERIAL'],
    ['negative', '-1', 'INVALID_SERIAL'],
    ['decimal point', '1.0', 'INVALID_SERIAL'],
    ['exponent', '1e3', 'INVALID_SERIAL'],
    ['whitespace', ' 1', 'INVALID_SERIAL'],
    ['2^38', '274877906944', 'SERIAL_OUT_OF_RANGE'],
    ['20 digits', '99999999999999999999', 'SERIAL_OUT_OF_RANGE'],
  ])('rejects serial with %s', (_label, serial, code) => {
    expect(codeOf(() => encodeSgtin96({ ...base, serial }))).toBe(code);
  });

  it.each([-1, 8, 1.5, Number.NaN])('rejects filter %s', (filter) => {
    expect(codeOf(() => encodeSgtin96({ ...base, filter }))).toBe('INVALID_FILTER');
  });

  it.each([5, 13, 0, 6.5, Number.NaN])('rejects companyPrefixLength %s', (companyPrefixLength) => {
    expect(codeOf(() => encodeSgtin96({ ...base, companyPrefixLength }))).toBe(
      'INVALID_COMPANY_PREFIX_LENGTH',
    );
  });

  it('requires companyPrefixLength from untyped callers instead of guessing it', () => {
    const input = { gtin: base.gtin, serial: base.serial } as unknown as Parameters<typeof encodeSgtin96>[0];
    expect(codeOf(() => encodeSgtin96(input))).toBe('INVALID_COMPANY_PREFIX_LENGTH');
  });

  it('rejects a bad GTIN', () => {
    expect(codeOf(() => encodeSgtin96({ ...base, gtin: '8061414112345' }))).toBe('INVALID_GTIN');
  });
});

describe('decodeSgtin96', () => {
  /** Builds a 96-bit value field by field, independent of the codec. */
  function raw(header: number, filter: number, partition: number, fields: bigint, serial: bigint): string {
    const v =
      (BigInt(header) << 88n) |
      (BigInt(filter) << 85n) |
      (BigInt(partition) << 82n) |
      (fields << 38n) |
      serial;
    return v.toString(16).toUpperCase().padStart(24, '0');
  }

  it.each([
    ['wrong header (SSCC-96 0x31)', raw(0x31, 1, 5, 1n, 1n)],
    ['wrong header (SGTIN-198 0x36)', raw(0x36, 1, 5, 1n, 1n)],
    ['partition 7', raw(0x30, 1, 7, 1n, 1n)],
    ['company prefix over 7 digits (partition 5)', raw(0x30, 1, 5, 10_000_000n << 20n, 1n)],
    ['item reference over 6 digits (partition 5)', raw(0x30, 1, 5, 1_000_000n, 1n)],
    ['item reference over 1 digit (partition 0)', raw(0x30, 1, 0, 10n, 1n)],
    ['23 hex digits', '3074257BF7194E4000001A8'],
    ['25 hex digits', '3074257BF7194E4000001A850'],
    ['non-hex', '3074257BF7194E4000001A8G'],
    ['0x prefix', '0x3074257BF7194E4000001A'],
    ['empty', ''],
  ])('rejects %s', (_label, hex) => {
    expect(codeOf(() => decodeSgtin96(hex))).toBe('INVALID_EPC');
  });

  it('accepts the largest field values each partition allows', () => {
    // Partition 6: 6-digit prefix 999999 and 7-digit item reference 9999999.
    const hex = raw(0x30, 7, 6, (999_999n << 24n) | 9_999_999n, (1n << 38n) - 1n);
    const epc = decodeSgtin96(hex);
    expect(epc.companyPrefixLength).toBe(6);
    expect(epc.tagUri).toBe('urn:epc:tag:sgtin-96:7.999999.9999999.274877906943');
    expect(epc.gtin.slice(0, 13)).toBe('9999999999999');
    expect(encodeSgtin96(epc).hex).toBe(hex);
  });
});

describe('decodeSgtin96TagUri', () => {
  it.each([
    ['id URI instead of tag URI', 'urn:epc:id:sgtin:0614141.812345.6789', 'INVALID_EPC'],
    ['sgtin-198', 'urn:epc:tag:sgtin-198:3.0614141.812345.6789', 'INVALID_EPC'],
    ['filter 8', 'urn:epc:tag:sgtin-96:8.0614141.812345.6789', 'INVALID_EPC'],
    ['12 + 2 digits', 'urn:epc:tag:sgtin-96:3.061414112345.81.6789', 'INVALID_EPC'],
    ['5-digit prefix', 'urn:epc:tag:sgtin-96:3.06141.81234567.6789', 'INVALID_EPC'],
    ['alphanumeric serial', 'urn:epc:tag:sgtin-96:3.0614141.812345.A1', 'INVALID_EPC'],
    ['leading zero serial', 'urn:epc:tag:sgtin-96:3.0614141.812345.01', 'INVALID_SERIAL'],
    ['serial 2^38', 'urn:epc:tag:sgtin-96:3.0614141.812345.274877906944', 'SERIAL_OUT_OF_RANGE'],
  ])('rejects %s', (_label, uri, code) => {
    expect(codeOf(() => decodeSgtin96TagUri(uri))).toBe(code);
  });
});

describe('isSgtin96SafeSerial', () => {
  it.each([
    ['0', true],
    ['1', true],
    ['274877906943', true],
    ['274877906944', false],
    ['06789', false],
    ['00', false],
    ['', false],
    ['12a', false],
    ['１２', false],
  ])('%s -> %s', (serial, safe) => {
    expect(isSgtin96SafeSerial(serial)).toBe(safe);
  });
});
