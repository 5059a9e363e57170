import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CodecError } from '../errors/codec-error.js';
import { vectorsDir } from '../testing/vectors.js';
import {
  canonicalJson,
  canonicalJsonBytes,
  isCanonicalJsonText,
  sameCanonicalJson,
} from './canonical-json.js';

const inputDir = join(vectorsDir(), 'jcs', 'input');
const outputDir = join(vectorsDir(), 'jcs', 'output');
const files = readdirSync(inputDir).filter((f) => f.endsWith('.json'));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('RFC 8785 vectors (jcs/input -> jcs/output)', () => {
  it('has every input paired with an output', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    expect(readdirSync(outputDir).sort()).toEqual([...files].sort());
  });

  it.each(files)('%s is byte-exact', (file) => {
    const input: unknown = JSON.parse(readFileSync(join(inputDir, file), 'utf8'));
    const expected = readFileSync(join(outputDir, file));
    expect(Buffer.from(canonicalJsonBytes(input)).equals(expected)).toBe(true);
    expect(canonicalJson(input)).toBe(expected.toString('utf8'));
  });
});

describe('canonicalJson', () => {
  it('sorts members by UTF-16 code units, not by code point or locale', () => {
    // U+1F602 (surrogates D83D DE02) sorts before U+FB33 in UTF-16, after it by code point.
    expect(canonicalJson({ '\ufb33': 1, '\u{1f602}': 2 })).toBe('{"\u{1f602}":2,"\ufb33":1}');
  });

  it('orders few members and many the same way, whatever order they were added in', () => {
    const names = ['b', 'a', '10', '9', 'B', '', '\ufb33', '\u{1f602}', 'é', 'e', 'aa', 'a '];
    for (const count of [2, 5, 12, 24, 25, 60]) {
      const keys = Array.from(
        { length: count },
        (_, i) => `${names[(i * 7) % names.length]}${Math.floor(i / 12)}`,
      );
      const object = Object.fromEntries(keys.map((k, i) => [k, i]));
      const expected = `{${[...new Set(keys)]
        .sort()
        .map((k) => `${JSON.stringify(k)}:${object[k]}`)
        .join(',')}}`;
      expect(canonicalJson(object)).toBe(expected);
      expect(canonicalJson(Object.fromEntries(Object.entries(object).reverse()))).toBe(expected);
    }
  });

  it('serialises numbers the ECMAScript way', () => {
    expect(canonicalJson([1e21, 1e-7, -0, 0.1 + 0.2, 100])).toBe('[1e+21,1e-7,0,0.30000000000000004,100]');
  });

  it('drops undefined members, honours toJSON', () => {
    expect(canonicalJson({ a: undefined, b: new Date('2024-01-02T03:04:05Z') })).toBe(
      '{"b":"2024-01-02T03:04:05.000Z"}',
    );
    expect(canonicalJson(Object.assign(Object.create(null) as object, { z: 1, y: [true, null] }))).toBe(
      '{"y":[true,null],"z":1}',
    );
  });

  it('keeps a member named __proto__ as JSON.parse creates it', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });

  it.each([
    ['top-level undefined', undefined],
    ['undefined in an array', [1, undefined]],
    ['a function member', { f: () => 1 }],
    ['a symbol', { s: Symbol('x') }],
    ['a bigint', { n: 1n }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['a Map', { m: new Map([['a', 1]]) }],
    [
      'a class instance',
      {
        c: new (class Point {
          x = 1;
        })(),
      },
    ],
    ['a lone surrogate', { s: '\ud800' }],
  ])('rejects %s', (_label, value) => {
    expect(codeOf(() => canonicalJson(value))).toBe('INVALID_JSON');
  });

  it('rejects cycles but accepts shared (non-circular) references', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(codeOf(() => canonicalJson(cyclic))).toBe('INVALID_JSON');
  });

  it('names the path to what it refuses, in keys as in values', () => {
    const refusal = (value: unknown) => {
      try {
        canonicalJson(value);
      } catch (err) {
        return { message: (err as CodecError).message, details: (err as CodecError).details };
      }
      return null;
    };
    expect(refusal({ a: [1, { b: () => 1 }] })).toEqual({
      message: 'a function at $.a[1].b cannot be canonicalised as JSON',
      details: { path: '$.a[1].b' },
    });
    expect(refusal({ ok: 'x', ['k\udc00']: 1 })?.details).toEqual({ path: '$.k\udc00' });
    // A hole is no JSON value.
    expect(refusal(Object.assign(new Array<number>(3), { 0: 1, 2: 3 }))?.details).toEqual({ path: '$[1]' });
  });

  it('writes every one-character string of the first 256 code points, alone and in text, as JSON.stringify does', () => {
    for (let c = 0; c < 256; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `ab${ch}cd`, `${ch}${ch}`]) {
        expect(canonicalJson(s)).toBe(JSON.stringify(s));
        expect(canonicalJson({ [s]: s })).toBe(`{${JSON.stringify(s)}:${JSON.stringify(s)}}`);
      }
    }
    expect(canonicalJson('')).toBe('""');
  });

  it('accepts paired surrogates anywhere and escapes as JSON.stringify does', () => {
    expect(canonicalJson({ '\u{1f602}': '\u{1f602}\n\u0007"' })).toBe(
      '{"\u{1f602}":"\u{1f602}\\n\\u0007\\""}',
    );
  });
});

describe('isCanonicalJsonText', () => {
  /** What it answers for a text, and what the walk answers: they must agree. */
  const both = (text: string) => {
    const value: unknown = JSON.parse(text);
    return { fast: isCanonicalJsonText(text, value), walk: canonicalJson(value) === text };
  };

  it.each(files)('%s: the canonical output is canonical, the input only if it is the output', (file) => {
    const input = readFileSync(join(inputDir, file), 'utf8');
    const output = readFileSync(join(outputDir, file), 'utf8');
    expect(isCanonicalJsonText(output, JSON.parse(output))).toBe(true);
    expect(both(input)).toEqual({ fast: input === output, walk: input === output });
  });

  it('agrees with the walk on generated texts, canonical or in any other order or spacing', () => {
    const value = jsonValues(42);
    /** The same value written with each object's members in reverse order. */
    const reversed = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map(reversed).join(',')}]`;
      if (typeof v === 'object' && v !== null) {
        const members = Object.keys(v).map(
          (k) => `${JSON.stringify(k)}:${reversed((v as Record<string, unknown>)[k])}`,
        );
        return `{${members.reverse().join(',')}}`;
      }
      return JSON.stringify(v);
    };
    let canonical = 0;
    for (let i = 0; i < 2_000; i++) {
      const v = value();
      for (const text of [canonicalJson(v), JSON.stringify(v), JSON.stringify(v, null, 1), reversed(v)]) {
        const answer = both(text);
        expect(answer.fast, text).toBe(answer.walk);
        if (answer.fast) canonical++;
      }
    }
    // Both answers occur, and often.
    expect(canonical).toBeGreaterThan(2_000);
    expect(canonical).toBeLessThan(8_000);
  });

  it('finds canonical a text whose keys are array indices in code unit order (written by the walk)', () => {
    expect(both('{"1":0,"10":0,"2":0}')).toEqual({ fast: true, walk: true });
    expect(both('{"1":0,"2":0,"10":0}')).toEqual({ fast: false, walk: false });
  });

  it('refuses a lone surrogate as the walk does', () => {
    expect(codeOf(() => isCanonicalJsonText('{"a":"\\ud800"}', { a: '\ud800' }))).toBe('INVALID_JSON');
    expect(codeOf(() => isCanonicalJsonText('{"\\udc00":1}', { '\udc00': 1 }))).toBe('INVALID_JSON');
  });
});

/**
 * Generated JSON values (plain, as JSON.parse makes them), from a fixed sequence (a linear congruential generator),
 * so a failure repeats.
 */
function jsonValues(seed: number): () => unknown {
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const keys = ['a', 'b', 'B', '1', '2', '10', '01', '', 'é', '\u{1f602}', 'a b', '"q"', '\n', 'z'];
  const scalars = [
    0,
    -0,
    1,
    -1,
    0.1 + 0.2,
    1e21,
    1e-7,
    2 ** 53,
    'x',
    '',
    'é\u{1f602}',
    '\u0007',
    true,
    false,
    null,
  ];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.4) return pick(scalars);
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) o[pick(keys)] = value(depth + 1);
    return o;
  };
  return () => value(0);
}

describe('sameCanonicalJson', () => {
  /** A copy of a plain value with each object's members in reverse order, and an undefined member added. */
  const reordered = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(reordered);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = { absent: undefined };
    for (const k of Object.keys(v).reverse()) out[k] = reordered((v as Record<string, unknown>)[k]);
    return out;
  };

  it('agrees with comparing the canonical texts on generated values, the same or not', () => {
    const value = jsonValues(7);
    let same = 0;
    let pairs = 0;
    for (let i = 0; i < 2_000; i++) {
      const v = value();
      for (const w of [reordered(v), value(), JSON.parse(JSON.stringify(v).replace(/1/, '2')) as unknown]) {
        const texts = canonicalJson(v) === canonicalJson(w);
        expect(sameCanonicalJson(v, w), `${JSON.stringify(v)} ${JSON.stringify(w)}`).toBe(texts);
        expect(sameCanonicalJson(w, v)).toBe(texts);
        if (texts) same++;
        pairs++;
      }
    }
    // Both answers occur, and often.
    expect(same).toBeGreaterThan(pairs / 4);
    expect(same).toBeLessThan((pairs * 3) / 4);
  });

  it('counts an undefined member as absent, and tells values apart by kind and order', () => {
    expect(sameCanonicalJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameCanonicalJson({ a: undefined }, {})).toBe(true);
    expect(sameCanonicalJson({ a: null }, {})).toBe(false);
    expect(sameCanonicalJson([1, 2], [2, 1])).toBe(false);
    expect(sameCanonicalJson({ 0: 'x' }, ['x'])).toBe(false);
    expect(sameCanonicalJson('1', 1)).toBe(false);
    expect(sameCanonicalJson(-0, 0)).toBe(true);
    expect(sameCanonicalJson({ a: [{ b: 1 }] }, { a: [{ b: 1, c: 2 }] })).toBe(false);
  });

  it('judges by the text what is not plain JSON: toJSON is honoured, and what JSON cannot say throws', () => {
    const at = '2026-11-29T12:00:00.000Z';
    expect(sameCanonicalJson({ at: new Date(at) }, { at })).toBe(true);
    expect(codeOf(() => sameCanonicalJson({ a: '\ud800' }, { a: '\ud800' }))).toBe('INVALID_JSON');
    expect(codeOf(() => sameCanonicalJson({ '\udc00': 1 }, { '\udc00': 1 }))).toBe('INVALID_JSON');
    expect(codeOf(() => sameCanonicalJson({ a: NaN }, { a: NaN }))).toBe('INVALID_JSON');
    expect(codeOf(() => sameCanonicalJson([undefined], [undefined]))).toBe('INVALID_JSON');
    // A difference found first does not hide what cannot be said further on.
    expect(codeOf(() => sameCanonicalJson({ a: 1, b: NaN }, { a: 2, b: NaN }))).toBe('INVALID_JSON');
  });
});
