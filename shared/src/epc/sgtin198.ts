/**
 * SGTIN-198: the RFID encoding of a GTIN + any AI (21) serial (up to 20 characters of set 82).
 *
 * GS1 EPC TDS §14.5.1.2 (SGTIN-198 coding table):
 *
 * | field     | header | filter | partition | company prefix | indicator + item ref | serial          |
 * |-----------|--------|--------|-----------|----------------|----------------------|-----------------|
 * | bits      | 8      | 3      | 3         | 20..40 (M)     | 24..4 (N), M+N = 44  | 140             |
 * | encoding  | 0x36   | integer| integer   | partition table (§14.3.3)             | 7-bit string (§14.3.2) |
 *
 * The serial is written one 7-bit ASCII code per character and padded with zero bits to 140 (TDS §14.3.2,
 * string encoding); only GS1 AI encodable character set 82 may appear. A tag's EPC bank holds whole 16-bit
 * words (EPC Gen2 §6.3.2.1.2), so the 198 bits are written as 208: 13 words, 52 hex digits, the last 10
 * bits zero.
 */
import { CodecError } from '../errors/codec-error.js';
import { isValidGs1Serial } from '../gs1/serial.js';
import { assertFilter, mask, packSgtinHead, unpackSgtinHead, type SgtinScheme } from './sgtin-fields.js';
import {
  assertCompanyPrefixLength,
  escapeGs3a3,
  joinGtin,
  sgtinPureIdentityUri,
  splitGtin,
  unescapeGs3a3,
} from './sgtin-uri.js';
import { SGTIN_FILTER } from './sgtin96.js';

/** EPC header of SGTIN-198, TDS §14.2 Table 14-1. */
export const SGTIN198_HEADER = 0x36;

/** Hex digits of an SGTIN-198 as the encoder writes it: 208 bits, 13 words. */
export const SGTIN198_HEX_LENGTH = 52;

/** What {@link encodeSgtin198} needs. */
export interface Sgtin198Input {
  /** Any valid GTIN-8/12/13/14; normalised to 14 digits. */
  gtin: string;
  /** An AI (21) serial: 1 to 20 characters of GS1 character set 82. */
  serial: string;
  /** 0..7, default 1 (point of sale trade item, {@link SGTIN_FILTER}). */
  filter?: number;
  /** Digits of the GS1 Company Prefix, 6..12. Comes from the product master data: never guessed. */
  companyPrefixLength: number;
}

/** An SGTIN-198 in every representation. */
export interface Sgtin198 {
  /** 52 upper-case hex digits (198 bits and 10 zero bits). */
  hex: string;
  /** `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §6.3.1), serial GS3A3-escaped. */
  pureIdentityUri: string;
  /** `urn:epc:tag:sgtin-198:Filter.CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §12), serial GS3A3-escaped. */
  tagUri: string;
  /** GTIN-14 with its check digit. */
  gtin: string;
  serial: string;
  filter: number;
  companyPrefixLength: number;
}

const SERIAL_BITS = 140;
const SGTIN198: SgtinScheme = { name: 'SGTIN-198', header: SGTIN198_HEADER, serialBits: SERIAL_BITS };
const CHAR_BITS = 7;
const SERIAL_CHARS = SERIAL_BITS / CHAR_BITS; // 20
/** Bits after the 198 that fill the last 16-bit word. */
const PAD_BITS = 10n;

function assertSerial(serial: string): string {
  if (!isValidGs1Serial(serial)) {
    throw new CodecError(
      'INVALID_SERIAL',
      `an SGTIN-198 serial is 1 to 20 characters of GS1 character set 82, got ${JSON.stringify(serial)}`,
      { details: { serial } },
    );
  }
  return serial;
}

/** TDS §14.3.2: each character as its 7-bit code, the first character in the most significant bits. */
function serialBits(serial: string): bigint {
  let bits = 0n;
  for (const ch of serial) bits = (bits << 7n) | BigInt(ch.charCodeAt(0));
  return bits << BigInt((SERIAL_CHARS - serial.length) * CHAR_BITS);
}

function tagUri(filter: number, companyPrefix: string, itemRef: string, serial: string): string {
  return `urn:epc:tag:sgtin-198:${filter}.${companyPrefix}.${itemRef}.${escapeGs3a3(serial)}`;
}

/**
 * Encodes a GTIN + AI (21) serial as SGTIN-198.
 * Throws `CodecError`: `INVALID_GTIN`, `INVALID_SERIAL`, `INVALID_FILTER`, `INVALID_COMPANY_PREFIX_LENGTH`.
 *
 * @example
 * encodeSgtin198({ gtin: '80614141123458', serial: '32a/b', filter: 3, companyPrefixLength: 7 }).hex;
 * // '3674257BF7194E59B2C2BF100000000000000000000000000000' (TDS 1.13 Annex E, padded to 13 words)
 */
export function encodeSgtin198(input: Sgtin198Input): Sgtin198 {
  const filter = assertFilter(input.filter ?? SGTIN_FILTER.POINT_OF_SALE);
  const companyPrefixLength = assertCompanyPrefixLength(input.companyPrefixLength);
  const serial = assertSerial(input.serial);
  const parts = splitGtin(input.gtin, companyPrefixLength);
  const value = packSgtinHead(SGTIN198, filter, companyPrefixLength, parts) | serialBits(serial);

  return {
    hex: (value << PAD_BITS).toString(16).toUpperCase().padStart(SGTIN198_HEX_LENGTH, '0'),
    pureIdentityUri: sgtinPureIdentityUri(input.gtin, serial, companyPrefixLength),
    tagUri: tagUri(filter, parts.companyPrefix, parts.indicatorAndItemReference, serial),
    gtin: joinGtin(parts),
    serial,
    filter,
    companyPrefixLength,
  };
}

/** TDS §14.4.2 string decoding: 7-bit codes up to the first zero; every bit after it must be zero. */
function decodeSerial(bits: bigint): string {
  let serial = '';
  for (let i = SERIAL_CHARS - 1; i >= 0; i--) {
    const code = Number((bits >> BigInt(i * CHAR_BITS)) & 0x7fn);
    if (code === 0) {
      if ((bits & mask(i * CHAR_BITS)) !== 0n) {
        throw new CodecError('INVALID_EPC', 'the serial field has bits set after its terminating zero');
      }
      break;
    }
    serial += String.fromCharCode(code);
  }
  if (!isValidGs1Serial(serial)) {
    throw new CodecError(
      'INVALID_EPC',
      `the serial field ${JSON.stringify(serial)} is not 1 to 20 characters of GS1 character set 82`,
    );
  }
  return serial;
}

/**
 * Decodes a 52-hex-digit SGTIN-198 EPC (either case) following TDS §14.4 and §14.5.1.2: header 0x36,
 * partition 0..6, each partitioned field below 10^digits, a serial of set-82 characters zero-padded, and
 * the 10 bits after the 198 zero. Throws `CodecError` `INVALID_EPC`.
 *
 * @example
 * decodeSgtin198('3674257BF7194E59B2C2BF100000000000000000000000000000').tagUri;
 * // 'urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb'
 */
export function decodeSgtin198(hex: string): Sgtin198 {
  if (typeof hex !== 'string' || !/^[0-9A-Fa-f]{52}$/.test(hex)) {
    throw new CodecError('INVALID_EPC', `an SGTIN-198 EPC is 52 hex digits, got ${JSON.stringify(hex)}`);
  }
  const word = BigInt(`0x${hex}`);
  if ((word & mask(PAD_BITS)) !== 0n) {
    throw new CodecError('INVALID_EPC', 'the 10 bits after an SGTIN-198 must be zero');
  }
  const value = word >> PAD_BITS;
  const { filter, companyPrefix, indicatorAndItemReference, gtin, companyPrefixLength } = unpackSgtinHead(
    value,
    SGTIN198,
  );
  const serial = decodeSerial(value & mask(SERIAL_BITS));

  return {
    hex: hex.toUpperCase(),
    pureIdentityUri: sgtinPureIdentityUri(gtin, serial, companyPrefixLength),
    tagUri: tagUri(filter, companyPrefix, indicatorAndItemReference, serial),
    gtin,
    serial,
    filter,
    companyPrefixLength,
  };
}

const TAG_URI = /^urn:epc:tag:sgtin-198:([0-7])\.([0-9]{6,12})\.([0-9]{1,7})\.(.+)$/;

/**
 * Decodes an SGTIN-198 tag URI (TDS §12), `urn:epc:tag:sgtin-198:F.CompanyPrefix.IndicatorAndItemRef.Serial`
 * with the serial GS3A3-escaped. Throws `CodecError` `INVALID_EPC` or `INVALID_SERIAL`.
 *
 * @example
 * decodeSgtin198TagUri('urn:epc:tag:sgtin-198:3.0614141.812345.32a%2Fb').serial; // '32a/b'
 */
export function decodeSgtin198TagUri(uri: string): Sgtin198 {
  const match = typeof uri === 'string' ? TAG_URI.exec(uri) : null;
  const [, filter, companyPrefix, indicatorAndItemReference, rawSerial] = match ?? [];
  if (
    filter === undefined ||
    companyPrefix === undefined ||
    indicatorAndItemReference === undefined ||
    rawSerial === undefined ||
    companyPrefix.length + indicatorAndItemReference.length !== 13
  ) {
    throw new CodecError('INVALID_EPC', `not an SGTIN-198 tag URI: ${JSON.stringify(uri)}`);
  }
  return encodeSgtin198({
    gtin: joinGtin({ companyPrefix, indicatorAndItemReference }),
    serial: unescapeGs3a3(rawSerial),
    filter: Number(filter),
    companyPrefixLength: companyPrefix.length,
  });
}
