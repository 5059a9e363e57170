import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { buildDigitalLink, digitalLinkPath, parseDigitalLink, parseDigitalLinkPath } from './digital-link.js';
import { computeGs1CheckDigit } from './gtin.js';
import { decodeDigitalLinkValue, encodeDigitalLinkValue } from './percent-encoding.js';

const vectors = z
  .object({
    links: z.array(z.object({ gtin: z.string(), serial: z.string(), path: z.string() })),
    invalidSerials: z.array(z.object({ serial: z.string(), why: z.string() })),
  })
  .parse(readVectorJson('gs1-digital-link.json'));

const CHARSET_82 = `!"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz`;
const BASE = 'https://id.example.com';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('Digital Link vectors (gs1-digital-link.json)', () => {
  it.each(vectors.links)('$gtin / $serial <-> $path', ({ gtin, serial, path }) => {
    const gtin14 = gtin.padStart(14, '0');
    expect(digitalLinkPath(gtin, serial)).toBe(path);
    expect(buildDigitalLink(BASE, gtin, serial)).toBe(`${BASE}${path}`);
    expect(parseDigitalLinkPath(path)).toEqual({ gtin: gtin14, serial });
    expect(parseDigitalLink(`${BASE}${path}`)).toEqual({ baseUrl: BASE, gtin: gtin14, serial, query: '' });
  });

  it.each(vectors.invalidSerials)('refuses to build with serial $serial ($why)', ({ serial }) => {
    expect(codeOf(() => buildDigitalLink(BASE, '70614141123451', serial))).toBe('INVALID_SERIAL');
  });
});

describe('percent-encoding of AI values', () => {
  it("encodes every character outside RFC 3986 unreserved, including !'()* that encodeURIComponent keeps", () => {
    expect(encodeDigitalLinkValue(`!"%&'()*+,-./:;<=>?_`)).toBe(
      '%21%22%25%26%27%28%29%2A%2B%2C-.%2F%3A%3B%3C%3D%3E%3F_',
    );
    expect(encodeDigitalLinkValue('AZaz09-._')).toBe('AZaz09-._');
  });

  it('decodes lower-case escapes and literal sub-delims', () => {
    expect(decodeDigitalLinkValue('32a%2fb')).toBe('32a/b');
    expect(decodeDigitalLinkValue("a!'()*+,;=:b")).toBe("a!'()*+,;=:b");
  });

  it.each([
    ['stray percent', 'ab%'],
    ['short escape', 'ab%2'],
    ['non-hex escape', 'ab%zz'],
    ['escaped non-ASCII byte', '%C3%A9'],
    ['escaped control', '%0A'],
    ['raw double quote', 'a"b'],
    ['raw space', 'a b'],
    ['raw non-ASCII', 'é'],
  ])('rejects %s', (_label, segment) => {
    expect(codeOf(() => decodeDigitalLinkValue(segment))).toBe('INVALID_SERIAL');
  });

  it('round-trips every set-82 string and never emits a reserved character (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...CHARSET_82), minLength: 1, maxLength: 20 }), (s) => {
        const encoded = encodeDigitalLinkValue(s);
        expect(encoded).toMatch(/^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})+$/);
        expect(decodeDigitalLinkValue(encoded)).toBe(s);
      }),
    );
  });
});

describe('buildDigitalLink', () => {
  it('normalises the GTIN and the base URL', () => {
    expect(buildDigitalLink('https://id.example.com/', '4006381333931', 'X1')).toBe(
      'https://id.example.com/01/04006381333931/21/X1',
    );
    expect(buildDigitalLink('https://example.com/dl/', '95010939', '1')).toBe(
      'https://example.com/dl/01/00000095010939/21/1',
    );
  });

  it.each([
    ['not a URL', 'id.example.com'],
    ['ftp scheme', 'ftp://id.example.com'],
    ['query on base', 'https://id.example.com/?a=1'],
    ['fragment on base', 'https://id.example.com/#x'],
    ['credentials', 'https://user:pw@id.example.com'],
  ])('rejects a base URL with %s', (_label, base) => {
    expect(codeOf(() => buildDigitalLink(base, '95010939', '1'))).toBe('INVALID_DIGITAL_LINK');
  });

  it('rejects bad GTINs and serials that cannot survive URI dot-segment removal', () => {
    expect(codeOf(() => buildDigitalLink(BASE, '95010938', '1'))).toBe('INVALID_GTIN');
    expect(codeOf(() => buildDigitalLink(BASE, '95010939', '.'))).toBe('INVALID_SERIAL');
    expect(codeOf(() => buildDigitalLink(BASE, '95010939', '..'))).toBe('INVALID_SERIAL');
    expect(buildDigitalLink(BASE, '95010939', '...')).toBe(`${BASE}/01/00000095010939/21/...`);
  });
});

describe('parseDigitalLinkPath', () => {
  it('pads GTIN-8/12/13 and tolerates one trailing slash', () => {
    expect(parseDigitalLinkPath('/01/95010939/21/1/')).toEqual({ gtin: '00000095010939', serial: '1' });
    expect(parseDigitalLinkPath('/01/012345678905/21/A%2FB')).toEqual({
      gtin: '00012345678905',
      serial: 'A/B',
    });
    expect(parseDigitalLinkPath('/01/4006381333931/21/x')).toEqual({ gtin: '04006381333931', serial: 'x' });
  });

  it.each([
    ['bad check digit', '/01/70614141123452/21/1', 'INVALID_GTIN'],
    ['short GTIN', '/01/1234567/21/1', 'INVALID_GTIN'],
    ['serial too long', `/01/70614141123451/21/${'1'.repeat(21)}`, 'INVALID_SERIAL'],
    ['serial with escaped space', '/01/70614141123451/21/a%20b', 'INVALID_SERIAL'],
    ['serial with #', '/01/70614141123451/21/a%23b', 'INVALID_SERIAL'],
    ['dot serial', '/01/70614141123451/21/%2E', 'INVALID_SERIAL'],
    ['missing serial', '/01/70614141123451', 'INVALID_DIGITAL_LINK'],
    ['empty serial', '/01/70614141123451/21/', 'INVALID_DIGITAL_LINK'],
    ['two trailing slashes', '/01/70614141123451/21/1//', 'INVALID_DIGITAL_LINK'],
    ['other qualifier', '/01/70614141123451/10/LOT1', 'INVALID_DIGITAL_LINK'],
    ['lot before serial', '/01/70614141123451/10/L/21/1', 'INVALID_DIGITAL_LINK'],
    ['alpha key name', '/gtin/70614141123451/ser/1', 'INVALID_DIGITAL_LINK'],
    ['no leading slash', '01/70614141123451/21/1', 'INVALID_DIGITAL_LINK'],
    ['query included', '/01/70614141123451/21/1?x=1', 'INVALID_DIGITAL_LINK'],
    ['prefix', '/dl/01/70614141123451/21/1', 'INVALID_DIGITAL_LINK'],
    ['empty', '', 'INVALID_DIGITAL_LINK'],
  ])('rejects %s', (_label, path, code) => {
    expect(codeOf(() => parseDigitalLinkPath(path))).toBe(code);
  });
});

describe('parseDigitalLink', () => {
  it('keeps the query string, drops the fragment, tolerates a trailing slash', () => {
    expect(parseDigitalLink(`${BASE}/01/09506000134352/21/ABC%2F1/?linkType=all&17=261231#top`)).toEqual({
      baseUrl: BASE,
      gtin: '09506000134352',
      serial: 'ABC/1',
      query: 'linkType=all&17=261231',
    });
  });

  it('keeps a path prefix in the base URL and checks an expected base', () => {
    const uri = 'https://Example.COM/dl/01/95010939/21/7';
    expect(parseDigitalLink(uri)).toEqual({
      baseUrl: 'https://example.com/dl',
      gtin: '00000095010939',
      serial: '7',
      query: '',
    });
    expect(parseDigitalLink(uri, { baseUrl: 'https://example.com/dl/' }).serial).toBe('7');
    expect(codeOf(() => parseDigitalLink(uri, { baseUrl: 'https://example.com' }))).toBe(
      'INVALID_DIGITAL_LINK',
    );
    expect(codeOf(() => parseDigitalLink(uri, { baseUrl: 'https://other.example/dl' }))).toBe(
      'INVALID_DIGITAL_LINK',
    );
  });

  it.each([
    ['relative', '/01/95010939/21/1', 'INVALID_DIGITAL_LINK'],
    ['non-http scheme', 'urn://x/01/95010939/21/1', 'INVALID_DIGITAL_LINK'],
    ['no path', 'https://id.example.com', 'INVALID_DIGITAL_LINK'],
    ['bad check digit', `${BASE}/01/95010938/21/1`, 'INVALID_GTIN'],
    ['bad serial', `${BASE}/01/95010939/21/a%20b`, 'INVALID_SERIAL'],
  ])('rejects %s', (_label, uri, code) => {
    expect(codeOf(() => parseDigitalLink(uri))).toBe(code);
  });

  it('round-trips random GTINs and set-82 serials (property)', () => {
    const digit = fc.constantFrom(...'0123456789');
    const gtin = fc
      .constantFrom(7, 11, 12, 13)
      .chain((n) => fc.string({ unit: digit, minLength: n, maxLength: n }))
      .map((body) => `${body}${computeGs1CheckDigit(body)}`);
    const serial = fc
      .string({ unit: fc.constantFrom(...CHARSET_82), minLength: 1, maxLength: 20 })
      .filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(gtin, serial, (g, s) => {
        const uri = buildDigitalLink(BASE, g, s);
        expect(parseDigitalLink(uri)).toEqual({
          baseUrl: BASE,
          gtin: g.padStart(14, '0'),
          serial: s,
          query: '',
        });
        // What a resolver sees after an HTTP client and the WHATWG URL parser have handled the link.
        expect(parseDigitalLinkPath(new URL(uri).pathname)).toEqual({ gtin: g.padStart(14, '0'), serial: s });
      }),
      { numRuns: 500 },
    );
  });
});
