/**
 * SGTIN-96: the 96-bit RFID encoding of a GTIN + numeric serial.
 *
 * GS1 EPC TDS §14.5.1 (SGTIN-96 coding table):
 *
 * | field     | header | filter | partition | company prefix | indicator + item ref | serial |
 * |-----------|--------|--------|-----------|----------------|----------------------|--------|
 * | bits      | 8      | 3      | 3         | 20..40 (M)     | 24..4 (N), M+N = 44  | 38     |
 * | encoding  | 0x30   | integer| integer   | partition table (§14.3.3)             | integer (§14.3.1) |
 *
 * The header 0x30 is from TDS §14.2 Table 14-1. The serial of an SGTIN-96 is a decimal integer without
 * leading zeros (only "0" itself may start with 0) and at most 2^38 - 1 = 274877906943; any other AI (21)
 * serial needs SGTIN-198, which this codec does not produce.
 */
import { CodecError } from '../errors/codec-error.js';
import { assertFilter, mask, packSgtinHead, unpackSgtinHead, type SgtinScheme } from './sgtin-fields.js';
import { assertCompanyPrefixLength, joinGtin, sgtinPureIdentityUri, splitGtin } from './sgtin-uri.js';

/** EPC header of SGTIN-96, TDS §14.2 Table 14-1. */
export const SGTIN96_HEADER = 0x30;

/** Largest serial an SGTIN-96 can carry: 2^38 - 1. */
export const SGTIN96_MAX_SERIAL = 274877906943n;

/**
 * SGTIN filter values, TDS §10 (filter values, SGTIN table). They let a reader select tags by packaging
 * level. 3 and 5 are reserved but encodable (TDS's own Annex E example uses 3).
 */
export const SGTIN_FILTER = {
  ALL_OTHERS: 0,
  /** Point of sale (POS) trade item: the default, a consumer unit. */
  POINT_OF_SALE: 1,
  FULL_CASE_FOR_TRANSPORT: 2,
  INNER_PACK: 4,
  UNIT_LOAD: 6,
  /** Unit inside a trade item, or a component not intended for individual sale. */
  COMPONENT: 7,
} as const;

/** What {@link encodeSgtin96} needs. */
export interface Sgtin96Input {
  /** Any valid GTIN-8/12/13/14; normalised to 14 digits. */
  gtin: string;
  /** Decimal, no leading zeros, at most 2^38 - 1. */
  serial: string;
  /** 0..7, default 1 (point of sale trade item, {@link SGTIN_FILTER}). */
  filter?: number;
  /** Digits of the GS1 Company Prefix, 6..12. Comes from the product master data: never guessed. */
  companyPrefixLength: number;
}

/** An SGTIN-96 in every representation. */
export interface Sgtin96 {
  /** 24 upper-case hex digits. */
  hex: string;
  /** `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §6.3.1). */
  pureIdentityUri: string;
  /** `urn:epc:tag:sgtin-96:Filter.CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §12). */
  tagUri: string;
  /** GTIN-14 with its check digit. */
  gtin: string;
  serial: string;
  filter: number;
  companyPrefixLength: number;
}

const SERIAL_BITS = 38n;
const SGTIN96: SgtinScheme = { name: 'SGTIN-96', header: SGTIN96_HEADER, serialBits: Number(SERIAL_BITS) };

function serialProblem(serial: string): 'INVALID_SERIAL' | 'SERIAL_OUT_OF_RANGE' | undefined {
  if (typeof serial !== 'string' || !/^(?:0|[1-9][0-9]*)$/.test(serial)) return 'INVALID_SERIAL';
  return BigInt(serial) > SGTIN96_MAX_SERIAL ? 'SERIAL_OUT_OF_RANGE' : undefined;
}

/**
 * True when the serial can be carried by an SGTIN-96: decimal digits, no leading zeros ("0" itself is
 * fine), at most 2^38 - 1 (TDS §14.5.1).
 *
 * @example
 * isSgtin96SafeSerial('6789'); // true
 * isSgtin96SafeSerial('06789'); // false
 * isSgtin96SafeSerial('274877906944'); // false (2^38)
 */
export function isSgtin96SafeSerial(serial: string): boolean {
  return serialProblem(serial) === undefined;
}

function assertSgtin96Serial(serial: string): bigint {
  const problem = serialProblem(serial);
  if (problem === 'INVALID_SERIAL') {
    throw new CodecError(
      'INVALID_SERIAL',
      `an SGTIN-96 serial is a decimal integer without leading zeros, got ${JSON.stringify(serial)}`,
      { details: { serial } },
    );
  }
  if (problem === 'SERIAL_OUT_OF_RANGE') {
    throw new CodecError(
      'SERIAL_OUT_OF_RANGE',
      `SGTIN-96 serial ${serial} is above 2^38 - 1 (274877906943)`,
      {
        details: { serial },
      },
    );
  }
  return BigInt(serial);
}

function tagUri(
  filter: number,
  companyPrefix: string,
  indicatorAndItemReference: string,
  serial: string,
): string {
  return `urn:epc:tag:sgtin-96:${filter}.${companyPrefix}.${indicatorAndItemReference}.${serial}`;
}

/**
 * Encodes a GTIN + numeric serial as SGTIN-96.
 * Throws `CodecError`: `INVALID_GTIN`, `INVALID_SERIAL`, `SERIAL_OUT_OF_RANGE`, `INVALID_FILTER`,
 * `INVALID_COMPANY_PREFIX_LENGTH`.
 *
 * @example
 * encodeSgtin96({ gtin: '80614141123458', serial: '6789', filter: 3, companyPrefixLength: 7 }).hex;
 * // '3074257BF7194E4000001A85' (TDS 1.13 Annex E)
 */
export function encodeSgtin96(input: Sgtin96Input): Sgtin96 {
  const filter = assertFilter(input.filter ?? SGTIN_FILTER.POINT_OF_SALE);
  const companyPrefixLength = assertCompanyPrefixLength(input.companyPrefixLength);
  const serial = assertSgtin96Serial(input.serial);
  const parts = splitGtin(input.gtin, companyPrefixLength);
  const value = packSgtinHead(SGTIN96, filter, companyPrefixLength, parts) | serial;

  return {
    hex: value.toString(16).toUpperCase().padStart(24, '0'),
    pureIdentityUri: sgtinPureIdentityUri(input.gtin, input.serial, companyPrefixLength),
    tagUri: tagUri(filter, parts.companyPrefix, parts.indicatorAndItemReference, input.serial),
    gtin: joinGtin(parts),
    serial: input.serial,
    filter,
    companyPrefixLength,
  };
}

/**
 * Decodes a 24-hex-digit SGTIN-96 EPC (either case) following TDS §14.4 and §14.5.1: header must be 0x30, the
 * partition 0..6, and each partitioned field must be below 10^digits (TDS §14.4.3, partition table decoding).
 * Throws `CodecError` `INVALID_EPC`.
 *
 * @example
 * decodeSgtin96('3074257BF7194E4000001A85');
 * // { gtin: '80614141123458', serial: '6789', filter: 3, companyPrefixLength: 7,
 * //   tagUri: 'urn:epc:tag:sgtin-96:3.0614141.812345.6789', pureIdentityUri: 'urn:epc:id:sgtin:0614141.812345.6789', ... }
 */
export function decodeSgtin96(hex: string): Sgtin96 {
  if (typeof hex !== 'string' || !/^[0-9A-Fa-f]{24}$/.test(hex)) {
    throw new CodecError('INVALID_EPC', `an SGTIN-96 EPC is 24 hex digits, got ${JSON.stringify(hex)}`);
  }
  const value = BigInt(`0x${hex}`);
  const { filter, companyPrefix, indicatorAndItemReference, gtin, companyPrefixLength } = unpackSgtinHead(
    value,
    SGTIN96,
  );
  const serial = (value & mask(SERIAL_BITS)).toString();

  return {
    hex: hex.toUpperCase(),
    pureIdentityUri: `urn:epc:id:sgtin:${companyPrefix}.${indicatorAndItemReference}.${serial}`,
    tagUri: tagUri(filter, companyPrefix, indicatorAndItemReference, serial),
    gtin,
    serial,
    filter,
    companyPrefixLength,
  };
}

const TAG_URI = /^urn:epc:tag:sgtin-96:([0-7])\.([0-9]{6,12})\.([0-9]{1,7})\.([0-9]+)$/;

/**
 * Decodes an SGTIN-96 tag URI (TDS §12), `urn:epc:tag:sgtin-96:F.CompanyPrefix.IndicatorAndItemRef.Serial`.
 * Throws `CodecError` `INVALID_EPC`, `INVALID_SERIAL` or `SERIAL_OUT_OF_RANGE`.
 *
 * @example
 * decodeSgtin96TagUri('urn:epc:tag:sgtin-96:3.0614141.812345.6789').hex; // '3074257BF7194E4000001A85'
 */
export function decodeSgtin96TagUri(uri: string): Sgtin96 {
  const match = typeof uri === 'string' ? TAG_URI.exec(uri) : null;
  const [, filter, companyPrefix, indicatorAndItemReference, serial] = match ?? [];
  if (
    filter === undefined ||
    companyPrefix === undefined ||
    indicatorAndItemReference === undefined ||
    serial === undefined ||
    companyPrefix.length + indicatorAndItemReference.length !== 13
  ) {
    throw new CodecError('INVALID_EPC', `not an SGTIN-96 tag URI: ${JSON.stringify(uri)}`);
  }
  return encodeSgtin96({
    gtin: joinGtin({ companyPrefix, indicatorAndItemReference }),
    serial,
    filter: Number(filter),
    companyPrefixLength: companyPrefix.length,
  });
}
