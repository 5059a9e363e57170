import { createHash } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { merkleRoot, sectionLeafHash, sectionProof, verifySectionProof } from './merkle.js';

const h = (...parts: (Buffer | string)[]) => {
  const x = createHash('sha256');
  for (const p of parts) x.update(typeof p === 'string' ? Buffer.from(p, 'hex') : p);
  return x.digest('hex');
};
const leaf = (name: string, content: unknown) =>
  h(Buffer.concat([Buffer.from([0]), Buffer.from(canonicalJson({ name, content }))]));
const node = (l: string, r: string) => h(Buffer.from([1]), l, r);

const sections = (n: number) =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`s${String(i).padStart(2, '0')}`, { i, v: `é${i}` }]),
  );

describe('the section Merkle tree (RFC 6962 §2.1)', () => {
  it('hashes leaves with 0x00 over RFC 8785 {name, content} and nodes with 0x01, splitting at the largest power of two', () => {
    const s = { b: { x: 2 }, a: { x: 1 }, c: [1, 2] };
    expect(sectionLeafHash('a', { x: 1 })).toBe(leaf('a', { x: 1 }));
    // Three leaves a, b, c (sorted by name): MTH = H(1 ‖ H(1 ‖ a ‖ b) ‖ c).
    expect(merkleRoot(s)).toBe(node(node(leaf('a', { x: 1 }), leaf('b', { x: 2 })), leaf('c', [1, 2])));
    expect(merkleRoot({ only: 1 })).toBe(leaf('only', 1));
    expect(merkleRoot({})).toBe(createHash('sha256').digest('hex'));
    // Five leaves: k = 4.
    const five = sections(5);
    const l = Object.keys(five).map((k) => leaf(k, five[k]));
    expect(merkleRoot(five)).toBe(node(node(node(l[0]!, l[1]!), node(l[2]!, l[3]!)), l[4]!));
  });

  it('does not depend on the order sections were written in', () => {
    expect(merkleRoot({ a: 1, b: 2, c: 3 })).toBe(merkleRoot({ c: 3, a: 1, b: 2 }));
  });

  it('gives every section of trees of 1 to 17 leaves a path that verifies, and only for its own content', () => {
    for (let n = 1; n <= 17; n++) {
      const s = sections(n);
      const root = merkleRoot(s);
      for (const name of Object.keys(s)) {
        const proof = sectionProof(s, name)!;
        expect(proof.root).toBe(root);
        expect(proof.path.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(verifySectionProof(name, s[name], proof.path, root)).toBe(true);
        expect(verifySectionProof(name, { ...(s[name] as object), i: -1 }, proof.path, root)).toBe(false);
        if (n > 1) expect(verifySectionProof(`${name}x`, s[name], proof.path, root)).toBe(false);
      }
    }
    expect(sectionProof(sections(3), 'missing')).toBeUndefined();
  });
});
