import { describe, expect, it } from 'vitest';
import { SGTIN_PARTITIONS, partitionForCompanyPrefixLength } from './partition.js';

describe('SGTIN partition table (TDS Table 14-2)', () => {
  it('has partitions 0..6, each splitting 44 bits and 13 digits, with enough bits for its digits', () => {
    expect(SGTIN_PARTITIONS.map((p) => p.partition)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const p of SGTIN_PARTITIONS) {
      expect(p.companyPrefixBits + p.itemReferenceBits).toBe(44);
      expect(p.companyPrefixDigits + p.itemReferenceDigits).toBe(13);
      expect(p.companyPrefixDigits).toBe(12 - p.partition);
      expect(2n ** BigInt(p.companyPrefixBits)).toBeGreaterThanOrEqual(10n ** BigInt(p.companyPrefixDigits));
      expect(2n ** BigInt(p.itemReferenceBits)).toBeGreaterThanOrEqual(10n ** BigInt(p.itemReferenceDigits));
      // ...and no bit to spare: one bit fewer would not hold every value.
      expect(2n ** BigInt(p.companyPrefixBits - 1)).toBeLessThan(10n ** BigInt(p.companyPrefixDigits));
    }
  });

  it('finds the row for prefix lengths 6..12 only', () => {
    expect(partitionForCompanyPrefixLength(7)?.partition).toBe(5);
    expect(partitionForCompanyPrefixLength(12)?.partition).toBe(0);
    expect(partitionForCompanyPrefixLength(5)).toBeUndefined();
    expect(partitionForCompanyPrefixLength(13)).toBeUndefined();
  });
});
