/**
 * The SGTIN partition table.
 *
 * GS1 EPC TDS §14.5.1 Table 14-2 (SGTIN partition table): the 3-bit partition value says how the 44 bits
 * after it are split between the GS1 Company Prefix and the indicator digit + item reference, so that the
 * two always hold 13 decimal digits together. Partition 0 is a 12-digit company prefix (40 bits) with a
 * 1-digit indicator/item reference (4 bits); partition 6 is a 6-digit prefix (20 bits) with 7 digits
 * (24 bits). Value 7 is not defined, and decoding it fails (TDS §14.4.3).
 */

/** One row of TDS Table 14-2. */
export interface SgtinPartition {
  /** The 3-bit partition value P. */
  readonly partition: number;
  /** Bits (M) and decimal digits (L) of the GS1 Company Prefix. */
  readonly companyPrefixBits: number;
  readonly companyPrefixDigits: number;
  /** Bits (N) and digits of the indicator digit + item reference (13 - L digits). */
  readonly itemReferenceBits: number;
  readonly itemReferenceDigits: number;
}

/**
 * TDS §14.5.1 Table 14-2, one row per partition value:
 * P, company prefix bits M, digits L, indicator/item reference bits N, digits 13 - L.
 */
const TABLE_14_2 = [
  [0, 40, 12, 4, 1],
  [1, 37, 11, 7, 2],
  [2, 34, 10, 10, 3],
  [3, 30, 9, 14, 4],
  [4, 27, 8, 17, 5],
  [5, 24, 7, 20, 6],
  [6, 20, 6, 24, 7],
] as const;

/** TDS §14.5.1 Table 14-2, indexed by partition value. */
export const SGTIN_PARTITIONS: readonly SgtinPartition[] = TABLE_14_2.map(
  ([partition, companyPrefixBits, companyPrefixDigits, itemReferenceBits, itemReferenceDigits]) => ({
    partition,
    companyPrefixBits,
    companyPrefixDigits,
    itemReferenceBits,
    itemReferenceDigits,
  }),
);

/**
 * The partition row for a company prefix length of 6 to 12 digits, or undefined.
 *
 * @example
 * partitionForCompanyPrefixLength(7)?.partition; // 5
 */
export function partitionForCompanyPrefixLength(length: number): SgtinPartition | undefined {
  return SGTIN_PARTITIONS.find((p) => p.companyPrefixDigits === length);
}
