/**
 * The fields SGTIN-96 and SGTIN-198 lay out alike above their serial (GS1 EPC TDS §14.5.1): header (8 bits),
 * filter (3), partition (3), then the company prefix and the indicator + item reference in 44 bits split by
 * the partition table (§14.3.3, integers of M and N bits). Only the serial below them differs: 38 bits of
 * integer in SGTIN-96, 140 bits of 7-bit string in SGTIN-198.
 */
import { CodecError } from '../errors/codec-error.js';
import { SGTIN_PARTITIONS, partitionForCompanyPrefixLength, type SgtinPartition } from './partition.js';
import { joinGtin, type SgtinParts } from './sgtin-uri.js';

/** One SGTIN scheme: its header and how its name reads in an error. */
export interface SgtinScheme {
  name: 'SGTIN-96' | 'SGTIN-198';
  header: number;
  /** Bits of its serial field, below the shared fields. */
  serialBits: number;
}

/** What the shared fields hold, decoded and checked. */
export interface SgtinHead extends SgtinParts {
  filter: number;
  companyPrefixLength: number;
  /** GTIN-14 with its check digit. */
  gtin: string;
}

export const mask = (bits: number | bigint): bigint => (1n << BigInt(bits)) - 1n;

/** Returns a filter value of 0..7 unchanged, else throws `INVALID_FILTER`. */
export function assertFilter(filter: number): number {
  if (!Number.isInteger(filter) || filter < 0 || filter > 7) {
    throw new CodecError('INVALID_FILTER', `filter must be an integer from 0 to 7, got ${String(filter)}`);
  }
  return filter;
}

/**
 * The shared fields of an SGTIN as an integer, shifted above the scheme's serial field (OR the serial in).
 * `companyPrefixLength` must have been checked (6..12).
 */
export function packSgtinHead(
  scheme: SgtinScheme,
  filter: number,
  companyPrefixLength: number,
  parts: SgtinParts,
): bigint {
  const row = partitionForCompanyPrefixLength(companyPrefixLength) as SgtinPartition;
  const s = BigInt(scheme.serialBits);
  return (
    (BigInt(scheme.header) << (s + 50n)) |
    (BigInt(filter) << (s + 47n)) |
    (BigInt(row.partition) << (s + 44n)) |
    (BigInt(parts.companyPrefix) << (s + BigInt(row.itemReferenceBits))) |
    (BigInt(parts.indicatorAndItemReference) << s)
  );
}

/**
 * Decodes and checks the shared fields of `value` (the EPC's bits, its serial field the low
 * `scheme.serialBits`): the header is the scheme's, the partition 0..6, each partitioned field below
 * 10^digits (TDS §14.4.3). Throws `CodecError` `INVALID_EPC`.
 */
export function unpackSgtinHead(value: bigint, scheme: SgtinScheme): SgtinHead {
  const s = BigInt(scheme.serialBits);
  const header = Number(value >> (s + 50n));
  if (header !== scheme.header) {
    const want = `0x${scheme.header.toString(16).toUpperCase()}`;
    throw new CodecError(
      'INVALID_EPC',
      `header 0x${header.toString(16).toUpperCase()} is not ${scheme.name} (${want})`,
    );
  }
  const filter = Number((value >> (s + 47n)) & 7n);
  const partition = Number((value >> (s + 44n)) & 7n);
  const row = SGTIN_PARTITIONS[partition];
  if (row === undefined) {
    throw new CodecError(
      'INVALID_EPC',
      `partition value ${partition} is not defined for SGTIN (TDS Table 14-2)`,
    );
  }
  const companyPrefixValue = (value >> (s + BigInt(row.itemReferenceBits))) & mask(row.companyPrefixBits);
  const itemValue = (value >> s) & mask(row.itemReferenceBits);
  if (companyPrefixValue >= 10n ** BigInt(row.companyPrefixDigits)) {
    throw new CodecError('INVALID_EPC', `company prefix field exceeds ${row.companyPrefixDigits} digits`);
  }
  if (itemValue >= 10n ** BigInt(row.itemReferenceDigits)) {
    throw new CodecError('INVALID_EPC', `item reference field exceeds ${row.itemReferenceDigits} digits`);
  }
  const parts = {
    companyPrefix: companyPrefixValue.toString().padStart(row.companyPrefixDigits, '0'),
    indicatorAndItemReference: itemValue.toString().padStart(row.itemReferenceDigits, '0'),
  };
  return { ...parts, filter, companyPrefixLength: row.companyPrefixDigits, gtin: joinGtin(parts) };
}
