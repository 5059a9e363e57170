/**
 * A Merkle tree over a passport's content sections, so one section can be proven against the root a
 * credential signs without showing the others.
 *
 * RFC 6962 §2.1 (Certificate Transparency) hashing, with SHA-256, by the transparency log's tree (tree.ts):
 * - leaves are the sections sorted by name (UTF-16 code units, as RFC 8785 sorts keys); the leaf data of a
 *   section is the RFC 8785 canonical JSON of `{"name": <section name>, "content": <section>}`;
 * - leaf hash = SHA-256(0x00 ‖ leaf data), node hash = SHA-256(0x01 ‖ left ‖ right);
 * - a tree of n > 1 leaves splits at k, the largest power of two smaller than n; an empty tree hashes to
 *   SHA-256 of nothing.
 * Hashes are lower-case hex. A proof lists the sibling hashes from the leaf up, each with its side.
 */
import { canonicalJson } from '@dpp/shared';
import {
  inclusionProof,
  leafHash,
  memoryReader,
  nodeHash,
  splitPoint,
  treeRoot,
} from '../transparency/tree.js';

export const MERKLE_ALGORITHM = 'RFC6962-SHA-256 over RFC8785 {name, content} leaves sorted by name';

export interface MerkleStep {
  /** Where the sibling sits: combine as H(0x01 ‖ sibling ‖ current) when `left`. */
  side: 'left' | 'right';
  hash: string;
}

export interface SectionProof {
  section: string;
  /** The leaf's position among the sorted sections, and how many there are. */
  leafIndex: number;
  leafCount: number;
  leafHash: string;
  path: MerkleStep[];
  root: string;
}

/** The leaf hash of one section. */
export function sectionLeafHash(name: string, content: unknown): string {
  return leafHash(Buffer.from(canonicalJson({ name, content }), 'utf8')).toString('hex');
}

/** Section names in leaf order. */
export function sortedSections(sections: Readonly<Record<string, unknown>>): string[] {
  // Default sort compares UTF-16 code units, the order RFC 8785 §3.2.3 uses for keys.
  return Object.keys(sections).sort();
}

/** Which side each step of leaf m's audit path (RFC 6962 §2.1.1) has its sibling on, from the leaf up. */
function sides(m: number, n: number): MerkleStep['side'][] {
  if (n <= 1) return [];
  const k = splitPoint(n);
  return m < k ? [...sides(m, k), 'right'] : [...sides(m - k, n - k), 'left'];
}

function leafBuffers(sections: Readonly<Record<string, unknown>>): Buffer[] {
  return sortedSections(sections).map((name) => Buffer.from(sectionLeafHash(name, sections[name]), 'hex'));
}

/** The Merkle root of a passport's sections. */
export function merkleRoot(sections: Readonly<Record<string, unknown>>): string {
  const leaves = leafBuffers(sections);
  return treeRoot(leaves.length, memoryReader(leaves)).toString('hex');
}

/** The proof that one section is in the tree, or undefined when there is no such section. */
export function sectionProof(
  sections: Readonly<Record<string, unknown>>,
  section: string,
): SectionProof | undefined {
  const names = sortedSections(sections);
  const index = names.indexOf(section);
  if (index < 0) return undefined;
  const leaves = leafBuffers(sections);
  const read = memoryReader(leaves);
  const side = sides(index, leaves.length);
  return {
    section,
    leafIndex: index,
    leafCount: names.length,
    leafHash: leaves[index]!.toString('hex'),
    path: inclusionProof(index, leaves.length, read).map((h, i) => ({
      side: side[i]!,
      hash: h.toString('hex'),
    })),
    root: treeRoot(leaves.length, read).toString('hex'),
  };
}

/** Recomputes the root from a section and its path: true when it equals `root`. */
export function verifySectionProof(
  name: string,
  content: unknown,
  path: readonly MerkleStep[],
  root: string,
): boolean {
  let h: Buffer = Buffer.from(sectionLeafHash(name, content), 'hex');
  for (const step of path) {
    const sibling = Buffer.from(step.hash, 'hex');
    h = step.side === 'left' ? nodeHash(sibling, h) : nodeHash(h, sibling);
  }
  return h.toString('hex') === root;
}
