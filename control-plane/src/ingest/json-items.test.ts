import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonItemsParser, JsonSyntaxError, NdjsonParser } from './json-items.js';

function items(chunks: readonly string[]): { items: unknown[]; members: Map<string, unknown> } {
  const p = new JsonItemsParser();
  const out = chunks.flatMap((c) => p.push(c));
  out.push(...p.end());
  return { items: out, members: new Map(p.members) };
}

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: fc.constantFrom('a', '"', '\\', '[', ']', '{', '}', ',', ':', ' ', '\n', 'é') }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 3 }),
  ),
})).v;

describe('JsonItemsParser', () => {
  it('reads a top-level array item by item', () => {
    expect(items(['[{"a":1}, {"b":[1,2,{"c":"]}"}]}, 3, "s", null, true]']).items).toEqual([
      { a: 1 },
      { b: [1, 2, { c: ']}' }] },
      3,
      's',
      null,
      true,
    ]);
    expect(items(['  [ ]  ']).items).toEqual([]);
  });

  it('reads { "items": [...] } and keeps the other members', () => {
    const r = items(['{"format":"x","items":[{"n":1},{"n":2}],"callbackUrl":"https://x.test/cb"}']);
    expect(r.items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(Object.fromEntries(r.members)).toEqual({ format: 'x', callbackUrl: 'https://x.test/cb' });
  });

  it('gives the same items however the document is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 5 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 10 }),
        (vs, wrap, cuts) => {
          const doc = wrap ? JSON.stringify({ items: vs }, null, 1) : JSON.stringify(vs);
          const points = [...new Set(cuts.map((c) => c % (doc.length + 1)))].sort((a, b) => a - b);
          const parts: string[] = [];
          let from = 0;
          for (const p of points) {
            parts.push(doc.slice(from, p));
            from = p;
          }
          parts.push(doc.slice(from));
          const expected = JSON.parse(JSON.stringify(vs)) as unknown[];
          expect(items(parts).items).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    ['a trailing comma', '[1,]'],
    ['a missing comma', '[1 2]'],
    ['an early end', '[{"a":1}'],
    ['a scalar document', '42'],
    ['an object without items', '{"a":1}'],
    ['items that is not an array', '{"items":{}}'],
    ['items twice', '{"items":[],"items":[]}'],
    ['text after the document', '[1] x'],
    ['an invalid item', '[{"a":tru}]'],
  ])('refuses %s', (_name, doc) => {
    expect(() => items([doc])).toThrow(JsonSyntaxError);
  });
});

describe('NdjsonParser', () => {
  it('reads one value per line, CRLF or LF, skips blank lines, and marks a bad line alone', () => {
    const p = new NdjsonParser();
    const lines = [...p.push('{"a":1}\r\n\n{"b"'), ...p.push(':2}\nnot json\n[3]'), ...p.end()];
    expect(lines).toEqual([
      { value: { a: 1 } },
      { value: { b: 2 } },
      { error: expect.stringMatching(/not JSON/) },
      { value: [3] },
    ]);
  });
});
