import { describe, expect, it } from 'vitest';
import { claimsFor } from '@dpp/testkit/agent';
import { sameLabel } from './resume.js';

describe('sameLabel', () => {
  const hex = '36364433400D1EE0B760C18ADF00000000000000000000000000';
  const before = { ...claimsFor('1'), sgtin96_epc: null, epc: { scheme: 'sgtin-198' as const, hex } };

  it('takes a fresh envelope about the same label, whatever scheme names its EPC', () => {
    expect(sameLabel(before, { ...before, jti: 'fresh' })).toBe(before);
    const old = claimsFor('2');
    const sgtin96 = { scheme: 'sgtin-96' as const, hex: old.sgtin96_epc! };
    expect(sameLabel(old, { ...old, epc: sgtin96 })).toBe(old); // a control plane that now names it in epc
  });

  it('refuses one whose SGTIN-198 differs', () => {
    const other = { ...before, epc: { scheme: 'sgtin-198' as const, hex: `${hex.slice(0, 50)}01` } };
    expect(() => sameLabel(before, other)).toThrow(/another label/);
  });
});
