export declare function leafHash(leaf: Uint8Array): Buffer;
export declare function nodeHash(left: Uint8Array, right: Uint8Array): Buffer;
/**
 * RFC 9162 §2.1.3.2: the root an inclusion proof (audit path, from the leaf up) leads to, or null when the
 * path cannot belong to a leaf at `leafIndex` of a tree of `treeSize` leaves (index out of range, path too
 * long or too short).
 */
export declare function rootFromInclusionProof(leafIndex: number, treeSize: number, leaf: Uint8Array, proof: readonly Uint8Array[]): Buffer | null;
/** RFC 9162 §2.1.3.2: true when `proof` shows the leaf hash `leaf` at `leafIndex` in the tree with `root`. */
export declare function verifyInclusion(leafIndex: number, treeSize: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean;
/**
 * RFC 9162 §2.1.4.2: true when `proof` shows the tree of `first` leaves with `firstRoot` is a prefix of the
 * tree of `second` leaves with `secondRoot`. Equal sizes need an empty proof and equal roots; the empty tree
 * is a prefix of every tree (the RFC defines proofs only for 0 < first < second).
 */
export declare function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean;
/** Lower-case hex of a hash, or null when `hex` is not 64 hex digits. */
export declare function hashFromHex(hex: unknown): Buffer | null;
