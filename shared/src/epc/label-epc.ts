/**
 * The EPC of a label: which SGTIN scheme a serial is written with, and the codec of either.
 *
 * SGTIN-96 holds only decimal serials without leading zeros up to 2^38 - 1 (TDS §14.5.1); every other AI (21)
 * serial is written as SGTIN-198 (TDS §14.5.1.2). A product may force one scheme; forcing SGTIN-96 on a serial
 * it cannot hold is refused, never truncated.
 */
import type { EpcScheme, LabelEpc } from '../aidc/carriers.js';
import { CodecError } from '../errors/codec-error.js';
import { SGTIN198_HEADER, decodeSgtin198, encodeSgtin198, type Sgtin198 } from './sgtin198.js';
import {
  SGTIN96_HEADER,
  decodeSgtin96,
  encodeSgtin96,
  isSgtin96SafeSerial,
  type Sgtin96,
} from './sgtin96.js';

/** A product's choice of EPC scheme: `auto` picks SGTIN-96 when the serial fits, SGTIN-198 otherwise. */
export const EPC_SCHEME_PREFERENCES = ['auto', 'sgtin-96', 'sgtin-198'] as const;
export type EpcSchemePreference = (typeof EPC_SCHEME_PREFERENCES)[number];

/**
 * The scheme a serial is encoded with under a product's preference.
 * Throws `CodecError` `SERIAL_NOT_SGTIN96` when `sgtin-96` is forced on a serial SGTIN-96 cannot hold.
 *
 * @example
 * epcSchemeFor('6789', 'auto'); // 'sgtin-96'
 * epcSchemeFor('AB-12', 'auto'); // 'sgtin-198'
 * epcSchemeFor('6789', 'sgtin-198'); // 'sgtin-198'
 */
export function epcSchemeFor(serial: string, preference: EpcSchemePreference): EpcScheme {
  if (preference === 'sgtin-198') return 'sgtin-198';
  if (isSgtin96SafeSerial(serial)) return 'sgtin-96';
  if (preference === 'sgtin-96') {
    throw new CodecError(
      'SERIAL_NOT_SGTIN96',
      `serial ${JSON.stringify(serial)} cannot be an SGTIN-96 (a decimal without leading zeros up to 2^38 - 1); use SGTIN-198`,
      { details: { serial } },
    );
  }
  return 'sgtin-198';
}

/** What {@link encodeLabelEpc} needs. */
export interface LabelEpcInput {
  gtin: string;
  serial: string;
  companyPrefixLength: number;
  scheme: EpcScheme;
  /** 0..7, default 1 (point of sale). */
  filter?: number;
}

/**
 * The EPC of a GTIN + serial in the given scheme.
 * Throws the `CodecError` of {@link encodeSgtin96} or {@link encodeSgtin198}.
 *
 * @example
 * encodeLabelEpc({ gtin: '80614141123458', serial: 'A1', companyPrefixLength: 7, scheme: 'sgtin-198' });
 * // { scheme: 'sgtin-198', hex: '3634257BF7194E60B10000000000000000000000000000000000' }
 */
export function encodeLabelEpc(input: LabelEpcInput): LabelEpc {
  const fields = {
    gtin: input.gtin,
    serial: input.serial,
    companyPrefixLength: input.companyPrefixLength,
    ...(input.filter === undefined ? {} : { filter: input.filter }),
  };
  switch (input.scheme) {
    case 'sgtin-96':
      return { scheme: 'sgtin-96', hex: encodeSgtin96(fields).hex };
    case 'sgtin-198':
      return { scheme: 'sgtin-198', hex: encodeSgtin198(fields).hex };
    default:
      throw new CodecError('INVALID_EPC', `unknown EPC scheme ${JSON.stringify(input.scheme)}`);
  }
}

/** A decoded label EPC: its scheme and the SGTIN it names. */
export type DecodedLabelEpc = (Sgtin96 & { scheme: 'sgtin-96' }) | (Sgtin198 & { scheme: 'sgtin-198' });

/**
 * Decodes an EPC of either scheme, chosen by its header (TDS §14.2 Table 14-1: 0x30 SGTIN-96, 0x36
 * SGTIN-198). Throws `CodecError` `INVALID_EPC` for any other header or malformed bits.
 *
 * @example
 * decodeLabelEpc('3074257BF7194E4000001A85').serial; // '6789' (scheme 'sgtin-96')
 */
export function decodeLabelEpc(hex: string): DecodedLabelEpc {
  if (typeof hex !== 'string' || !/^[0-9A-Fa-f]{2}/.test(hex)) {
    throw new CodecError('INVALID_EPC', `an EPC is hex digits, got ${JSON.stringify(hex)}`);
  }
  const header = Number.parseInt(hex.slice(0, 2), 16);
  if (header === SGTIN96_HEADER) return { ...decodeSgtin96(hex), scheme: 'sgtin-96' };
  if (header === SGTIN198_HEADER) return { ...decodeSgtin198(hex), scheme: 'sgtin-198' };
  throw new CodecError(
    'INVALID_EPC',
    `header 0x${hex.slice(0, 2).toUpperCase()} is neither SGTIN-96 (0x30) nor SGTIN-198 (0x36)`,
  );
}
