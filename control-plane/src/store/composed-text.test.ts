import { describe, expect, it } from 'vitest';
import { ComposedTexts } from './composed-text.js';

describe('ComposedTexts', () => {
  it('composes a text once per composition of parts and what else decides it', () => {
    const texts = new ComposedTexts();
    let composed = 0;
    const compose = (parts: readonly string[], rest: string) =>
      texts.text(parts, rest, () => {
        composed += 1;
        return `${parts.join(' + ')} | ${rest}`;
      });
    const a = 'select 1';
    const b = 'select 2';
    expect(compose([a, b], 'x')).toBe('select 1 + select 2 | x');
    expect(compose([a, b], 'x')).toBe('select 1 + select 2 | x');
    expect(composed).toBe(1);
    // Another order, another rest, a prefix of the parts: each its own text.
    expect(compose([b, a], 'x')).toBe('select 2 + select 1 | x');
    expect(compose([a, b], 'y')).toBe('select 1 + select 2 | y');
    expect(compose([a], 'x')).toBe('select 1 | x');
    expect(composed).toBe(4);
  });

  it('keeps composing correctly once full, forgetting what it kept', () => {
    const texts = new ComposedTexts();
    // Parts that are new strings each time fill it; every answer is still the composition asked for.
    for (let i = 0; i < 5000; i++) {
      const part = `select ${i}`;
      expect(texts.text([part], '', () => `[${part}]`)).toBe(`[select ${i}]`);
    }
    let composed = 0;
    texts.text(['select 1'], '', () => String(++composed));
    texts.text(['select 1'], '', () => String(++composed));
    expect(composed).toBe(1);
  });
});
