import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Hash,
  appendNodes,
  consistencyProof,
  inclusionProof,
  leafHash,
  memoryReader,
  nodeHash,
  readingNodes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from './tree.js';

// The Certificate Transparency reference tree (RFC 6962 hashing, as RFC 9162 keeps it).
const LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => leafHash(Buffer.from(h, 'hex')));
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const hex = (hashes: Hash[]) => hashes.map((h) => h.toString('hex'));

/** The recursive definition of RFC 9162 §2.1.1 over a plain list, to check the node store against. */
function naiveRoot(leaves: Hash[]): Hash {
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}

describe('the transparency log tree (RFC 9162 §2.1)', () => {
  const read = memoryReader(LEAVES);

  it('has the reference roots for every size 0 to 8', () => {
    for (let n = 0; n <= 8; n++) expect(treeRoot(n, read).toString('hex'), `size ${n}`).toBe(ROOTS[n]);
  });

  it('gives the reference inclusion proofs', () => {
    expect(hex(inclusionProof(0, 8, read))).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(hex(inclusionProof(5, 8, read))).toEqual([
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(() => inclusionProof(8, 8, read)).toThrow(RangeError);
  });

  it('gives the reference consistency proofs', () => {
    expect(hex(consistencyProof(1, 1, read))).toEqual([]);
    expect(hex(consistencyProof(1, 8, read))).toEqual(hex(inclusionProof(0, 8, read)));
    expect(hex(consistencyProof(6, 8, read))).toEqual([
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(hex(consistencyProof(2, 5, read))).toEqual([
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ]);
  });

  it('grows in batches to the tree the definition gives, and every audit path leads to its root', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }), (batches) => {
        const leaves: Hash[] = [];
        const nodes = new Map<string, Hash>();
        const reader = (level: number, index: number) => nodes.get(`${level}/${index}`)!;
        for (const count of batches) {
          const fresh = Array.from({ length: count }, (_, i) => leafHash(Buffer.from([leaves.length + i])));
          for (const n of appendNodes(leaves.length, fresh, reader))
            nodes.set(`${n.level}/${n.index}`, n.hash);
          leaves.push(...fresh);
          expect(treeRoot(leaves.length, reader).equals(naiveRoot(leaves))).toBe(true);
        }
        const size = leaves.length;
        const root = treeRoot(size, reader);
        for (let i = 0; i < size; i++) {
          const proof = inclusionProof(i, size, reader);
          expect(verifyInclusion(i, size, leaves[i]!, proof, root)).toBe(true);
          expect(verifyInclusion(i, size, leafHash(Buffer.from('other')), proof, root)).toBe(false);
        }
        for (let m = 1; m <= size; m++) {
          const proof = consistencyProof(m, size, reader);
          const earlier = treeRoot(m, reader);
          expect(verifyConsistency(m, size, proof, earlier, root), `${m} -> ${size}`).toBe(true);
          if (m < size) {
            // A log that rewrote its first m leaves cannot show it extends the tree it had.
            expect(verifyConsistency(m, size, proof, leafHash(Buffer.from('forged')), root)).toBe(false);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads only the nodes it needs, fetched in one go', async () => {
    const fetched: number[] = [];
    const proof = await readingNodes(
      async (refs) => {
        fetched.push(refs.length);
        return refs.map((r) => ({ ...r, hash: read(r.level, r.index) }));
      },
      (reader) => inclusionProof(5, 8, reader),
    );
    expect(hex(proof)).toEqual(hex(inclusionProof(5, 8, read)));
    expect(fetched).toEqual([3]);
  });
});
