import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { leafHash, rootFromInclusionProof, verifyConsistency, verifyInclusion } from './merkle.js';
import * as reference from './test-support/merkle-reference.js';

// Certificate Transparency's reference vectors (RFC 6962 test data, as in transparency-dev/merkle).
const LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => Buffer.from(h, 'hex'));
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
const h = (hex: string): Buffer => Buffer.from(hex, 'hex');
const hs = (list: string[]): Buffer[] => list.map(h);

const PATH_0_OF_8 = [
  '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
  '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
  '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
];
const PATH_5_OF_8 = [
  'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
  'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
];

const consistencyProof = reference.consistencyProof;
const { mth } = reference;
const path = reference.auditPath;

describe('RFC 9162 Merkle tree verification', () => {
  it('the reference tree in the test has the CT reference roots for sizes 0 to 8', () => {
    for (let n = 0; n <= 8; n++) expect(mth(LEAVES.slice(0, n)).toString('hex')).toBe(ROOTS[n]);
  });

  it('verifies the CT reference inclusion proofs', () => {
    const root = h(ROOTS[8]!);
    expect(verifyInclusion(0, 8, leafHash(LEAVES[0]!), hs(PATH_0_OF_8), root)).toBe(true);
    expect(verifyInclusion(5, 8, leafHash(LEAVES[5]!), hs(PATH_5_OF_8), root)).toBe(true);
    expect(verifyInclusion(0, 1, leafHash(LEAVES[0]!), [], h(ROOTS[1]!))).toBe(true);
  });

  it('refuses a reference inclusion proof moved to another leaf, index, size or root', () => {
    const root = h(ROOTS[8]!);
    expect(verifyInclusion(1, 8, leafHash(LEAVES[0]!), hs(PATH_0_OF_8), root)).toBe(false);
    expect(verifyInclusion(0, 8, leafHash(LEAVES[1]!), hs(PATH_0_OF_8), root)).toBe(false);
    expect(verifyInclusion(0, 4, leafHash(LEAVES[0]!), hs(PATH_0_OF_8), root)).toBe(false);
    expect(verifyInclusion(5, 8, leafHash(LEAVES[5]!), hs(PATH_5_OF_8), h(ROOTS[7]!))).toBe(false);
    expect(verifyInclusion(8, 8, leafHash(LEAVES[0]!), hs(PATH_0_OF_8), root)).toBe(false);
    expect(verifyInclusion(0, 8, leafHash(LEAVES[0]!), hs(PATH_0_OF_8.slice(0, 2)), root)).toBe(false);
    expect(verifyInclusion(0, 8, leafHash(LEAVES[0]!), hs([...PATH_0_OF_8, ROOTS[1]!]), root)).toBe(false);
    expect(rootFromInclusionProof(-1, 8, leafHash(LEAVES[0]!), [])).toBeNull();
  });

  it('verifies the CT reference consistency proofs', () => {
    const cases: [number, number, string[]][] = [
      [1, 8, PATH_0_OF_8],
      [
        6,
        8,
        [
          '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
          'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
          'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
        ],
      ],
      [
        2,
        5,
        [
          '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
          'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
        ],
      ],
      [1, 1, []],
    ];
    for (const [m, n, proof] of cases) {
      expect(verifyConsistency(m, n, h(ROOTS[m]!), h(ROOTS[n]!), hs(proof))).toBe(true);
      expect(consistencyProof(m, LEAVES.slice(0, n)).map((b) => b.toString('hex'))).toEqual(proof);
    }
  });

  it('refuses a reference consistency proof for other sizes or roots', () => {
    const six = hs([
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(verifyConsistency(6, 8, h(ROOTS[6]!), h(ROOTS[8]!), six)).toBe(true);
    expect(verifyConsistency(5, 8, h(ROOTS[5]!), h(ROOTS[8]!), six)).toBe(false);
    expect(verifyConsistency(6, 7, h(ROOTS[6]!), h(ROOTS[7]!), six)).toBe(false);
    expect(verifyConsistency(6, 8, h(ROOTS[5]!), h(ROOTS[8]!), six)).toBe(false);
    expect(verifyConsistency(6, 8, h(ROOTS[6]!), h(ROOTS[7]!), six)).toBe(false);
    expect(verifyConsistency(6, 8, h(ROOTS[6]!), h(ROOTS[8]!), six.slice(0, 2))).toBe(false);
    expect(verifyConsistency(8, 6, h(ROOTS[8]!), h(ROOTS[6]!), six)).toBe(false);
    expect(verifyConsistency(3, 3, h(ROOTS[3]!), h(ROOTS[4]!), [])).toBe(false);
  });

  const trees = fc
    .array(fc.uint8Array({ maxLength: 8 }), { minLength: 1, maxLength: 70 })
    .map((a) => a.map((u) => Buffer.from(u)));

  it('verifies every audit path of a reference tree, and no path at another index', () => {
    fc.assert(
      fc.property(trees, fc.nat(), (leaves, i) => {
        const n = leaves.length;
        const m = i % n;
        const root = mth(leaves);
        expect(verifyInclusion(m, n, leafHash(leaves[m]!), path(m, leaves), root)).toBe(true);
        const other = (m + 1) % n;
        if (other !== m && !leaves[other]!.equals(leaves[m]!)) {
          expect(verifyInclusion(other, n, leafHash(leaves[m]!), path(m, leaves), root)).toBe(false);
        }
      }),
    );
  });

  it('verifies every consistency proof of a reference tree, and refuses it once an entry changes', () => {
    fc.assert(
      fc.property(trees, fc.nat(), fc.nat(), (leaves, a, b) => {
        const n = leaves.length;
        const m = 1 + (a % n);
        const proof = consistencyProof(m, leaves);
        expect(verifyConsistency(m, n, mth(leaves.slice(0, m)), mth(leaves), proof)).toBe(true);
        // The log rewrote one entry of the old tree: the new tree no longer extends the remembered head.
        const j = b % m;
        const rewritten = leaves.map((l, k) => (k === j ? Buffer.concat([l, Buffer.from([0xff])]) : l));
        expect(
          verifyConsistency(m, n, mth(leaves.slice(0, m)), mth(rewritten), consistencyProof(m, rewritten)),
        ).toBe(false);
      }),
    );
  });
});
