/**
 * The Merkle tree of RFC 9162 §2.1 (Certificate Transparency 2.0, the same hashing as RFC 6962), over a
 * store that keeps each perfect subtree's hash once it is complete: the node at (level L, index i) covers
 * leaves [i·2^L, (i+1)·2^L). Every subtree RFC 9162's recursion asks for is either such a node or splits
 * into one on the left and a smaller tree on the right, so a root, an audit path or a consistency proof
 * of any tree size reads O(log² n) nodes and never a leaf it does not need.
 *
 * - leaf hash = SHA-256(0x00 ‖ leaf), node hash = SHA-256(0x01 ‖ left ‖ right);
 * - a tree of n > 1 leaves splits at k, the largest power of two smaller than n; the empty tree hashes to
 *   SHA-256 of nothing.
 *
 * The functions are synchronous over a {@link NodeReader}; {@link readingNodes} runs one twice, first to
 * learn which nodes it reads (the coordinates do not depend on the hashes), then with them fetched.
 */
import { createHash } from 'node:crypto';

export type Hash = Buffer;

/** The hash of the perfect subtree at (level, index); throws when the store has no such node. */
export type NodeReader = (level: number, index: number) => Hash;

export interface NodeRef {
  level: number;
  index: number;
}

export interface StoredNode extends NodeRef {
  hash: Hash;
}

const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);

const sha256 = (...parts: Uint8Array[]): Hash => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

export const EMPTY_ROOT: Hash = sha256();

export function leafHash(leaf: Uint8Array): Hash {
  return sha256(LEAF, leaf);
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256(NODE, left, right);
}

/** The largest power of two smaller than n (n > 1): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPowerOfTwo = (n: number): boolean => n > 0 && (n & (n - 1)) === 0;

/** MTH(D[start:end]) of RFC 9162 §2.1.1. */
function rangeHash(start: number, end: number, read: NodeReader): Hash {
  const n = end - start;
  if (n === 0) return EMPTY_ROOT;
  if (isPowerOfTwo(n) && start % n === 0) return read(Math.log2(n), start / n);
  const k = splitPoint(n);
  return nodeHash(rangeHash(start, start + k, read), rangeHash(start + k, end, read));
}

/** The root of the tree of the first `size` leaves. */
export function treeRoot(size: number, read: NodeReader): Hash {
  return rangeHash(0, size, read);
}

/** PATH(m, D[start:end]) of RFC 9162 §2.1.3.1: the audit path of leaf m, from the leaf up. */
function path(m: number, start: number, end: number, read: NodeReader): Hash[] {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  return m < k
    ? [...path(m, start, start + k, read), rangeHash(start + k, end, read)]
    : [...path(m - k, start + k, end, read), rangeHash(start, start + k, read)];
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1). */
export function inclusionProof(index: number, size: number, read: NodeReader): Hash[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  return path(index, 0, size, read);
}

/** SUBPROOF(m, D[start:end], b) of RFC 9162 §2.1.4.1. */
function subproof(m: number, start: number, end: number, complete: boolean, read: NodeReader): Hash[] {
  const n = end - start;
  if (m === n) return complete ? [] : [rangeHash(start, end, read)];
  const k = splitPoint(n);
  return m <= k
    ? [...subproof(m, start, start + k, complete, read), rangeHash(start + k, end, read)]
    : [...subproof(m - k, start + k, end, false, read), rangeHash(start, start + k, read)];
}

/** The consistency proof between the trees of `first` and `second` leaves (RFC 9162 §2.1.4.1). */
export function consistencyProof(first: number, second: number, read: NodeReader): Hash[] {
  if (!(first > 0 && first <= second)) {
    throw new RangeError(`no consistency proof from ${first} to ${second}`);
  }
  return subproof(first, 0, second, true, read);
}

/**
 * The nodes that appending `leaves` (their leaf hashes) to a tree of `size` leaves completes: each leaf at
 * level 0 and every perfect subtree it closes. Reads the earlier nodes it combines with.
 */
export function appendNodes(size: number, leaves: readonly Hash[], read: NodeReader): StoredNode[] {
  const written = new Map<string, Hash>();
  const at = (level: number, index: number): Hash => written.get(`${level}/${index}`) ?? read(level, index);
  const nodes: StoredNode[] = [];
  const put = (level: number, index: number, hash: Hash): void => {
    written.set(`${level}/${index}`, hash);
    nodes.push({ level, index, hash });
  };
  leaves.forEach((leaf, offset) => {
    const position = size + offset;
    put(0, position, leaf);
    for (let level = 1; (position + 1) % 2 ** level === 0; level++) {
      const index = (position + 1) / 2 ** level - 1;
      put(level, index, nodeHash(at(level - 1, 2 * index), at(level - 1, 2 * index + 1)));
    }
  });
  return nodes;
}

/** RFC 9162 §2.1.3.2: whether `proof` leads leaf `index`'s hash to `root` in a tree of `size` leaves. */
export function verifyInclusion(index: number, size: number, leaf: Hash, proof: Hash[], root: Hash): boolean {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 §2.1.4.2: whether `proof` shows the tree of `second` leaves extends the tree of `first`. */
export function verifyConsistency(
  first: number,
  second: number,
  proof: Hash[],
  firstRoot: Hash,
  secondRoot: Hash,
): boolean {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (!(first > 0 && first < second) || proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) [fn, sn] = [fn >> 1, sn >> 1];
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else {
      sr = nodeHash(sr, c);
    }
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 && fr.equals(firstRoot) && sr.equals(secondRoot);
}

/** The store has no node where the tree needs one: it lost or never had that part of the log. */
export class MissingNodeError extends Error {
  override readonly name = 'MissingNodeError';
}

const ZERO: Hash = Buffer.alloc(32);

/**
 * Runs `compute` over nodes fetched in one go: a first run records which nodes it reads, `fetch` loads
 * them, a second run computes with them.
 */
export async function readingNodes<T>(
  fetch: (refs: NodeRef[]) => Promise<StoredNode[]>,
  compute: (read: NodeReader) => T,
): Promise<T> {
  const wanted = new Map<string, NodeRef>();
  compute((level, index) => {
    wanted.set(`${level}/${index}`, { level, index });
    return ZERO;
  });
  const found = new Map(
    (wanted.size > 0 ? await fetch([...wanted.values()]) : []).map((n) => [`${n.level}/${n.index}`, n.hash]),
  );
  return compute((level, index) => {
    const hash = found.get(`${level}/${index}`);
    if (!hash) throw new MissingNodeError(`the log has no node at level ${level}, index ${index}`);
    return hash;
  });
}

/** An in-memory tree over leaf hashes, for small trees (a passport's sections) and tests. */
export function memoryReader(leaves: readonly Hash[]): NodeReader {
  const nodes = new Map(appendNodes(0, leaves, () => ZERO).map((n) => [`${n.level}/${n.index}`, n.hash]));
  return (level, index) => {
    const hash = nodes.get(`${level}/${index}`);
    if (!hash) throw new Error(`no node at level ${level}, index ${index}`);
    return hash;
  };
}
