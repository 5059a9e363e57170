import { describe, expect, it } from 'vitest';
import {
  NDEF_URI_PREFIXES,
  decodeNdefUriMessage,
  decodeType2NdefTlv,
  encodeNdefUriMessage,
  encodeType2NdefTlv,
  ndefUriTagData,
  uriOfTagData,
} from './ndef.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s/g, ''), 'hex'));

describe('NDEF URI record', () => {
  it('encodes the NFC Forum URI RTD example: "http://www.nfc.com" as code 0x01 and "nfc.com"', () => {
    // The URI RTD's own example: payload 01 6E 66 63 2E 63 6F 6D, in a short well-known record D1 01 08 55.
    expect(hex(encodeNdefUriMessage('http://www.nfc.com'))).toBe('D1010855016E66632E636F6D');
  });

  it('abbreviates the longest prefix and keeps the rest in UTF-8', () => {
    expect(encodeNdefUriMessage('https://id.example.com/01/09506000134352/21/2')[4]).toBe(0x04);
    expect(encodeNdefUriMessage('https://www.example.com/')[4]).toBe(0x02);
    expect(encodeNdefUriMessage('urn:epc:id:sgtin:0614141.812345.6789')[4]).toBe(0x1e);
    expect(encodeNdefUriMessage('example:no-prefix')[4]).toBe(0x00);
    const m = encodeNdefUriMessage('https://example.com/crème');
    expect(hex(m.subarray(5))).toBe(hex(new TextEncoder().encode('example.com/crème')));
    expect(m[2]).toBe(1 + 'example.com/crème'.length + 1); // è is two bytes
  });

  it('decodes what it encodes, for every identifier code', () => {
    NDEF_URI_PREFIXES.forEach((prefix) => {
      const uri = `${prefix}x/1`;
      expect(decodeNdefUriMessage(encodeNdefUriMessage(uri))).toBe(uri);
    });
    expect(NDEF_URI_PREFIXES).toHaveLength(0x24);
  });

  it('refuses URIs it cannot carry in one short record', () => {
    expect(() => encodeNdefUriMessage('')).toThrow(/empty/);
    expect(() => encodeNdefUriMessage('https://a/\n')).toThrow(/control character/);
    expect(() => encodeNdefUriMessage(`https://${'a'.repeat(255)}`)).toThrow(/at most 255/);
    expect(encodeNdefUriMessage(`https://${'a'.repeat(254)}`)[2]).toBe(255);
  });

  it('refuses messages that are not exactly one short U record', () => {
    const good = encodeNdefUriMessage('https://example.com/a');
    const patch = (i: number, v: number) => {
      const b = good.slice();
      b[i] = v;
      return b;
    };
    expect(() => decodeNdefUriMessage(new Uint8Array([0xd1, 1]))).toThrow(/no record/);
    expect(() => decodeNdefUriMessage(patch(0, 0x91))).toThrow(/exactly one record/); // ME clear
    expect(() => decodeNdefUriMessage(patch(0, 0xf1))).toThrow(/chunked/);
    expect(() => decodeNdefUriMessage(patch(0, 0xd2))).toThrow(/TNF is 2/);
    expect(() => decodeNdefUriMessage(patch(0, 0xc1))).toThrow(/not a short record/);
    expect(() => decodeNdefUriMessage(patch(3, 0x54))).toThrow(/type U/); // 'T', a text record
    expect(() => decodeNdefUriMessage(patch(4, 0x24))).toThrow(/0x24 is reserved/);
    expect(() => decodeNdefUriMessage(good.subarray(0, good.length - 1))).toThrow(/exactly/);
    expect(() => decodeNdefUriMessage(new Uint8Array([...good, 0]))).toThrow(/exactly/);
    expect(() => decodeNdefUriMessage(bytes('D1 01 03 55 04 C3 28'))).toThrow(/not UTF-8/);
    expect(() => decodeNdefUriMessage(bytes('D1 01 00 55'))).toThrow(/no identifier code/);
  });

  it('skips an ID field when the IL flag is set', () => {
    expect(decodeNdefUriMessage(bytes('D9 01 02 01 55 AA 04 61'))).toBe('https://a');
  });
});

describe('Type 2 tag NDEF TLV', () => {
  it('wraps a message as 03 <length> <message> FE, with the three-byte length from 255 bytes on', () => {
    expect(hex(ndefUriTagData('https://example.com/a'))).toBe(
      `0312D1010E5504${hex(new TextEncoder().encode('example.com/a'))}FE`,
    );
    const long = encodeType2NdefTlv(new Uint8Array(300));
    expect(hex(long.subarray(0, 4))).toBe('03FF012C');
    expect(long).toHaveLength(4 + 300 + 1);
    expect(decodeType2NdefTlv(long)).toHaveLength(300);
  });

  it('finds the NDEF TLV after NULL and control TLVs, and ignores what follows the terminator', () => {
    const area = bytes('00 00 01 03 A0 0C 44 03 05 D1 01 01 55 00 FE 00 00 00');
    expect(hex(decodeType2NdefTlv(area))).toBe('D101015500');
    expect(uriOfTagData(bytes(`${hex(ndefUriTagData('https://a.b/c'))}000000`))).toBe('https://a.b/c');
  });

  it('reads the empty NDEF message of a factory-fresh tag, which holds no URI', () => {
    expect(decodeType2NdefTlv(bytes('03 00 FE 00'))).toHaveLength(0);
    expect(() => uriOfTagData(bytes('03 00 FE 00'))).toThrow(/no record/);
  });

  it('refuses a data area with no NDEF TLV, or one cut short', () => {
    expect(() => decodeType2NdefTlv(bytes('FE 00 00 00'))).toThrow(/terminator TLV first/);
    expect(() => decodeType2NdefTlv(bytes('00000000'))).toThrow(/holds no NDEF/);
    expect(() => decodeType2NdefTlv(bytes('03 10 D1 01'))).toThrow(/ends inside a TLV/);
    expect(() => decodeType2NdefTlv(bytes('03 FF 01'))).toThrow(/ends inside a TLV/);
  });
});
