import { describe, expect, it } from 'vitest';
import {
  gs1AiLength,
  gs1ElementsFromHri,
  gs1ElementsFromRaw,
  gs1ElementsToRaw,
  gs1HriToRaw,
  gs1PredefinedValueLength,
  gs1RawToHri,
} from './element-string.js';

const GS = '\x1d';

describe('GS1 element strings', () => {
  it('knows AI lengths and predefined value lengths (GenSpecs §3.2, Figure 7.8.5-2)', () => {
    expect([
      gs1AiLength('01'),
      gs1AiLength('21'),
      gs1AiLength('24'),
      gs1AiLength('31'),
      gs1AiLength('80'),
    ]).toEqual([2, 2, 3, 4, 4]);
    expect(gs1PredefinedValueLength('01')).toBe(14);
    expect(gs1PredefinedValueLength('17')).toBe(6);
    expect(gs1PredefinedValueLength('3103')).toBe(6);
    expect(gs1PredefinedValueLength('21')).toBeNull();
    expect(gs1PredefinedValueLength('10')).toBeNull();
  });

  it('turns raw data into the human-readable form: fixed values by length, variable ones up to GS', () => {
    expect(gs1RawToHri('0110950600830521211234')).toBe('(01)10950600830521(21)1234');
    expect(gs1RawToHri(`10LOT-7${GS}17261231${GS}21A(1)>2`)).toBe('(10)LOT-7(17)261231(21)A(1)>2');
    expect(gs1RawToHri(`0110950600830521310300150021X_Y`)).toBe('(01)10950600830521(3103)001500(21)X_Y');
  });

  it('puts a GS after a variable-length value only when another element follows', () => {
    const els = [
      { ai: '21', value: 'AB' },
      { ai: '01', value: '10950600830521' },
      { ai: '10', value: 'L1' },
    ];
    expect(gs1ElementsToRaw(els)).toBe(`21AB${GS}011095060083052110L1`);
    expect(gs1ElementsFromRaw(gs1ElementsToRaw(els))).toEqual(els);
    expect(gs1HriToRaw('(01)10950600830521(21)ABC')).toBe('01109506008305212' + '1ABC');
  });

  it('reads parentheses inside a value where no AI can start', () => {
    expect(gs1ElementsFromHri('(01)10950600830521(21)A(B)(C')).toEqual([
      { ai: '01', value: '10950600830521' },
      { ai: '21', value: 'A(B)(C' },
    ]);
    // After a fixed-length value the next AI starts exactly where the value ends.
    expect(gs1ElementsFromHri('(01)10950600830521(21)(01)')).toEqual([
      { ai: '01', value: '10950600830521' },
      { ai: '21', value: '(01)' },
    ]);
  });

  it('refuses what is not an element string, each with a clear reason', () => {
    expect(() => gs1RawToHri('')).toThrow(/empty/);
    expect(() => gs1RawToHri('01123')).toThrow(/cut off/);
    expect(() => gs1RawToHri('AB12')).toThrow(/no AI at position 0/);
    expect(() => gs1RawToHri('0110950600830521 21x')).toThrow(/no AI at position 16/);
    expect(() => gs1RawToHri('21has space')).toThrow(/character set 82/);
    expect(() => gs1HriToRaw('01)123')).toThrow(/starts with an AI/);
    expect(() => gs1HriToRaw('(01)1234(21)A')).toThrow(/14 digits/);
    expect(() => gs1ElementsToRaw([{ ai: '2', value: 'x' }])).toThrow(/not an AI/);
    expect(() => gs1ElementsToRaw([])).toThrow(/at least one AI/);
  });
});
