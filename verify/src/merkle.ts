/**
 * RFC 9162 (Certificate Transparency 2.0) §2.1 Merkle tree verification, SHA-256: leaf hash =
 * SHA-256(0x00 ‖ leaf), node hash = SHA-256(0x01 ‖ left ‖ right). Written here from the RFC's algorithms so
 * the verifier shares no code with the log it checks.
 *
 * Tree sizes can exceed 2^31, so the bit operations of the RFC are done with arithmetic (`% 2`, halving)
 * rather than JavaScript's 32-bit `&` and `>>`.
 */
import { createHash } from 'node:crypto';

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

export function leafHash(leaf: Uint8Array): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(leaf).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

const isOdd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/**
 * RFC 9162 §2.1.3.2: the root an inclusion proof (audit path, from the leaf up) leads to, or null when the
 * path cannot belong to a leaf at `leafIndex` of a tree of `treeSize` leaves (index out of range, path too
 * long or too short).
 */
export function rootFromInclusionProof(
  leafIndex: number,
  treeSize: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Buffer | null {
  if (!isSize(leafIndex) || !isSize(treeSize) || leafIndex >= treeSize) return null;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return null;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 §2.1.3.2: true when `proof` shows the leaf hash `leaf` at `leafIndex` in the tree with `root`. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const r = rootFromInclusionProof(leafIndex, treeSize, leaf, proof);
  return r !== null && r.equals(root);
}

/**
 * RFC 9162 §2.1.4.2: true when `proof` shows the tree of `first` leaves with `firstRoot` is a prefix of the
 * tree of `second` leaves with `secondRoot`. Equal sizes need an empty proof and equal roots; the empty tree
 * is a prefix of every tree (the RFC defines proofs only for 0 < first < second).
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isSize(first) || !isSize(second) || first > second) return false;
  if (first === second) return proof.length === 0 && Buffer.from(firstRoot).equals(secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  // Step 1: when `first` is an exact power of two, its root is itself the first node of the path.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/** Lower-case hex of a hash, or null when `hex` is not 64 hex digits. */
export function hashFromHex(hex: unknown): Buffer | null {
  return typeof hex === 'string' && /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}
