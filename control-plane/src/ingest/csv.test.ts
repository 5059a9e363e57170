import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_MAX_RECORD_CHARS, CsvParser, CsvSyntaxError } from './csv.js';

function parseAll(chunks: readonly string[]): string[][] {
  const p = new CsvParser();
  const out = chunks.flatMap((c) => p.push(c));
  return [...out, ...p.end()].map((r) => r.fields);
}

/** Cuts a text at the given positions. */
function split(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const p of points) {
    parts.push(text.slice(from, p));
    from = p;
  }
  parts.push(text.slice(from));
  return parts;
}

/** RFC 4180 writer for the property test: quote when needed, double the quotes. */
function writeCsv(records: string[][], eol: string): string {
  return records
    .map((r) => r.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(','))
    .join(eol);
}

describe('CsvParser (RFC 4180)', () => {
  it('reads fields, quoted commas, doubled quotes and quoted line breaks', () => {
    const text = 'a,b,c\r\n1,"x, y","say ""hi"""\r\n2,"line1\r\nline2",\r\n';
    expect(parseAll([text])).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, y', 'say "hi"'],
      ['2', 'line1\r\nline2', ''],
    ]);
  });

  it('accepts LF and CR line ends, a last record without one, skips blank lines and a BOM', () => {
    expect(parseAll(['\ufeffa,b\n\n1,2\r3,4\r\n\r\n5,6'])).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
      ['5', '6'],
    ]);
  });

  it('keeps empty fields, including a trailing one and an empty quoted one', () => {
    expect(parseAll(['a,,"",\n'])).toEqual([['a', '', '', '']]);
  });

  it('gives the same records however the text is cut into chunks', () => {
    const field = fc.string({
      unit: fc.constantFrom('a', 'b', ',', '"', '\r', '\n', ' ', 'é', '😀'),
      maxLength: 6,
    });
    const records = fc.array(fc.array(field, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        records,
        fc.constantFrom('\r\n', '\n'),
        fc.array(fc.nat(), { maxLength: 8 }),
        (rs, eol, cuts) => {
          // A record of one empty field is a blank line, which the parser skips by design.
          const kept = rs.map((r) => (r.every((f) => f === '') ? [...r.slice(0, -1), 'x'] : r));
          const text = writeCsv(kept, eol);
          expect(parseAll(split(text, cuts))).toEqual(kept);
          expect(parseAll([...text])).toEqual(kept);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reports the physical line where records start', () => {
    const p = new CsvParser();
    const recs = [...p.push('h1,h2\n"multi\nline",x\nlast,y\n'), ...p.end()];
    expect(recs.map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it.each([
    ['an unterminated quote', 'a,b\n1,"never closed\n', /never closed/],
    ['a quote inside an unquoted field', 'a,b\n1,ab"c\n', /quote inside an unquoted field/],
    ['text after a closing quote', 'a,b\n1,"ab"c\n', /after a closing quote/],
  ])('refuses %s with the line number', (_name, text, message) => {
    let error: unknown;
    try {
      parseAll([text]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CsvSyntaxError);
    expect((error as CsvSyntaxError).line).toBe(2);
    expect((error as Error).message).toMatch(message);
  });

  it('bounds a record, so an unclosed quote cannot hold the rest of a large file in memory', () => {
    const p = new CsvParser();
    p.push('a\n"');
    const chunk = 'x'.repeat(64 * 1024);
    expect(() => {
      for (let i = 0; i * chunk.length <= CSV_MAX_RECORD_CHARS; i++) p.push(chunk);
    }).toThrow(/longer than/);
  });
});
