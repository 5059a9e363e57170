/**
 * The RFC 9162 §2.1 definitions written naively, straight from the text (MTH, PATH, PROOF by recursion):
 * the reference the verifier's iterative algorithms are tested against, and the log of the test fixtures.
 */
import { createHash } from 'node:crypto';
import { leafHash, nodeHash } from '../merkle.js';

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function mth(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leafHash(leaves[0]!);
  const k = largestPowerOfTwoBelow(leaves.length);
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

export function auditPath(m: number, leaves: readonly Uint8Array[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = largestPowerOfTwoBelow(leaves.length);
  return m < k
    ? [...auditPath(m, leaves.slice(0, k)), mth(leaves.slice(k))]
    : [...auditPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}

function subproof(m: number, leaves: readonly Uint8Array[], complete: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [mth(leaves)];
  const k = largestPowerOfTwoBelow(n);
  return m <= k
    ? [...subproof(m, leaves.slice(0, k), complete), mth(leaves.slice(k))]
    : [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

export function consistencyProof(m: number, leaves: readonly Uint8Array[]): Buffer[] {
  return subproof(m, leaves, true);
}
