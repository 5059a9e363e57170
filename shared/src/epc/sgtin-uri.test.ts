import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CodecError } from '../errors/codec-error.js';
import { computeGs1CheckDigit } from '../gs1/gtin.js';
import { parseSgtinPureIdentityUri, sgtinPureIdentityUri } from './sgtin-uri.js';

const CHARSET_82 = `!"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz`;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('SGTIN pure identity URI', () => {
  it('moves the indicator digit in front of the item reference (TDS §7.1)', () => {
    expect(sgtinPureIdentityUri('80614141123458', '6789', 7)).toBe('urn:epc:id:sgtin:0614141.812345.6789');
    expect(sgtinPureIdentityUri('01416740186413', '1', 11)).toBe('urn:epc:id:sgtin:14167401864.01.1');
    expect(sgtinPureIdentityUri('80614141123458', '1', 12)).toBe('urn:epc:id:sgtin:061414112345.8.1');
  });

  it('escapes the seven GS3A3 characters and nothing else (TDS §5)', () => {
    expect(sgtinPureIdentityUri('80614141123458', `"%&/<>?`, 7)).toBe(
      'urn:epc:id:sgtin:0614141.812345.%22%25%26%2F%3C%3E%3F',
    );
    expect(sgtinPureIdentityUri('80614141123458', `A!'()*+,-.:;=_z`, 7)).toBe(
      `urn:epc:id:sgtin:0614141.812345.A!'()*+,-.:;=_z`,
    );
  });

  it('parses back, recomputing the check digit', () => {
    expect(parseSgtinPureIdentityUri('urn:epc:id:sgtin:0614141.812345.6789')).toEqual({
      gtin: '80614141123458',
      serial: '6789',
      companyPrefixLength: 7,
    });
    expect(parseSgtinPureIdentityUri('urn:epc:id:sgtin:0614141.812345.a%2fb').serial).toBe('a/b');
  });

  it.each([
    ['tag URI', 'urn:epc:tag:sgtin-96:1.0614141.812345.6789', 'INVALID_EPC'],
    ['digits not adding to 13', 'urn:epc:id:sgtin:0614141.81234.6789', 'INVALID_EPC'],
    ['5-digit prefix', 'urn:epc:id:sgtin:06141.81234567.6789', 'INVALID_EPC'],
    ['no serial', 'urn:epc:id:sgtin:0614141.812345.', 'INVALID_EPC'],
    ['literal slash', 'urn:epc:id:sgtin:0614141.812345.a/b', 'INVALID_SERIAL'],
    ['stray percent', 'urn:epc:id:sgtin:0614141.812345.a%', 'INVALID_SERIAL'],
    ['escape of an unescaped char', 'urn:epc:id:sgtin:0614141.812345.a%41', 'INVALID_SERIAL'],
    ['space', 'urn:epc:id:sgtin:0614141.812345.a b', 'INVALID_SERIAL'],
    ['serial too long', `urn:epc:id:sgtin:0614141.812345.${'1'.repeat(21)}`, 'INVALID_SERIAL'],
  ])('rejects %s', (_label, uri, code) => {
    expect(codeOf(() => parseSgtinPureIdentityUri(uri))).toBe(code);
  });

  it('round-trips any GTIN, prefix length and set-82 serial (property)', () => {
    const digit = fc.constantFrom(...'0123456789');
    const gtin = fc
      .string({ unit: digit, minLength: 13, maxLength: 13 })
      .map((body) => `${body}${computeGs1CheckDigit(body)}`);
    const serial = fc.string({ unit: fc.constantFrom(...CHARSET_82), minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(gtin, serial, fc.integer({ min: 6, max: 12 }), (g, s, l) => {
        expect(parseSgtinPureIdentityUri(sgtinPureIdentityUri(g, s, l))).toEqual({
          gtin: g,
          serial: s,
          companyPrefixLength: l,
        });
      }),
    );
  });
});
