import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { assertGs1Serial, isValidGs1Serial } from './serial.js';

const vectors = z
  .object({ invalidSerials: z.array(z.object({ serial: z.string(), why: z.string() })) })
  .parse(readVectorJson('gs1-digital-link.json'));

/** GS1 General Specifications Figure 7.11-1, written out character by character. */
const CHARSET_82 = `!"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz`;

describe('AI (21) serial', () => {
  it('character set 82 has 82 characters', () => {
    expect(new Set(CHARSET_82).size).toBe(82);
  });

  it.each(vectors.invalidSerials)('rejects $serial ($why)', ({ serial }) => {
    expect(isValidGs1Serial(serial)).toBe(false);
    expect(() => assertGs1Serial(serial)).toThrow(CodecError);
    try {
      assertGs1Serial(serial);
    } catch (err) {
      expect((err as CodecError).code).toBe('INVALID_SERIAL');
    }
  });

  it('accepts every character of set 82 and exactly 20 characters', () => {
    for (const ch of CHARSET_82) expect(isValidGs1Serial(ch)).toBe(true);
    expect(assertGs1Serial('A'.repeat(20))).toBe('A'.repeat(20));
  });

  it('rejects every printable ASCII character outside set 82, and non-ASCII', () => {
    for (let code = 0x20; code <= 0x7e; code += 1) {
      const ch = String.fromCharCode(code);
      expect(isValidGs1Serial(`A${ch}`)).toBe(CHARSET_82.includes(ch));
    }
    expect(isValidGs1Serial('é')).toBe(false);
    expect(isValidGs1Serial('A\n')).toBe(false);
    expect(isValidGs1Serial(7 as unknown as string)).toBe(false);
  });

  it('accepts any 1..20 string over set 82 (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...CHARSET_82), minLength: 1, maxLength: 20 }), (s) => {
        expect(assertGs1Serial(s)).toBe(s);
      }),
    );
  });
});
