import { describe, expect, it } from 'vitest';
import { isDeviceProtocolError } from './errors.js';
import { decodeFieldHex, encodeFieldHex } from './field-hex.js';
import { epcPcWord, normalizeEpcHexWords, ZplLabelBuilder } from './writer.js';

/** urn:epc:tag:sgtin-198:3.0614141.012345.32a/b: 198 bits, zero-padded to 13 words (52 hex digits). */
const SGTIN198 = '3674257BF40C0E59B2C2BF10000000000000000000000000000000'.slice(0, 52);

describe('ZplLabelBuilder', () => {
  it('writes the label the agent prints', () => {
    const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
      .rfidSetup({ tries: 3, onError: 'E' })
      .qr(20, 20, 'https://id.example.com/01/09506000134352/21/2', { magnification: 5 })
      .text(20, 320, 'SN 2', { height: 30 })
      .writeEpc('30764433400d1ec000000002')
      .readBackEpc()
      .toString();
    expect(zpl.split('\n')).toEqual([
      '^XA',
      '^PW400',
      '^LL400',
      '^RS8,,,3,E',
      '^FO20,20^BQN,2,5^FDMA,https://id.example.com/01/09506000134352/21/2^FS',
      '^FO20,320^A0N,30,30^FDSN 2^FS',
      '^RFW,H^FD30764433400D1EC000000002^FS',
      '^RFR,H,0,12,E^FN1^FS',
      '^FH_^HV1,24,EPC:,_0D_0A,L^FS',
      '^XZ',
    ]);
  });

  it('in a UTF-8 format (^CI28), carries any text with ^FH escapes for what would break the stream', () => {
    const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 240, utf8: true })
      .text(10, 10, 'Chaise Élégante ^XZ ~JA a_b, Łódź', { height: 20 })
      .toString();
    expect(zpl.split('\n')).toEqual([
      '^XA',
      '^PW400',
      '^LL240',
      '^CI28',
      '^FO10,10^A0N,20,20^FH_^FDChaise Élégante _5EXZ _7EJA a_5Fb_2C Łódź^FS',
      '^XZ',
    ]);
    const field = /\^FD(.*)\^FS/.exec(zpl)![1]!;
    expect(decodeFieldHex(field)).toBe('Chaise Élégante ^XZ ~JA a_b, Łódź');
    expect(() =>
      new ZplLabelBuilder({ widthDots: 10, lengthDots: 10, utf8: true }).text(0, 0, '', { height: 20 }),
    ).toThrow(/empty/);
  });

  it('puts the void length in the third ^RS parameter', () => {
    const zpl = new ZplLabelBuilder().rfidSetup({ tries: 1, onError: 'P', voidLengthDots: 100 }).toString();
    expect(zpl).toContain('^RS8,,100,1,P');
  });

  it('refuses field data that would break the command stream', () => {
    const b = new ZplLabelBuilder();
    for (const bad of ['a^FS', 'a~HS', 'line\nbreak', '', 'ünï']) {
      try {
        b.text(0, 0, bad, { height: 20 });
        expect.unreachable(`accepted ${JSON.stringify(bad)}`);
      } catch (err) {
        expect(isDeviceProtocolError(err, 'INVALID_FIELD_DATA')).toBe(true);
      }
    }
  });

  it('refuses out-of-range numbers and an ^RS without error handling', () => {
    const b = new ZplLabelBuilder();
    expect(() => b.qr(0, 0, 'x', { magnification: 11 })).toThrow(/magnification/);
    expect(() => b.text(-1, 0, 'x', { height: 20 })).toThrow(/x must be/);
    expect(() => b.rfidSetup({ tries: 3, onError: '' as 'N' })).toThrow(/onError/);
  });

  it('writes a longer EPC as Zebra does: the PC word with its length, then the EPC from word 2 of bank 1', () => {
    const zpl = new ZplLabelBuilder()
      .writeEpc(SGTIN198.toLowerCase())
      .readBackEpc({ epcBytes: 26 })
      .toString();
    expect(zpl.split('\n')).toEqual([
      '^XA',
      '^RFW,H,1,2,1^FD6800^FS',
      `^RFW,H,2,26,1^FD${SGTIN198}^FS`,
      '^RFR,H,2,26,1^FN1^FS',
      '^FH_^HV1,52,EPC:,_0D_0A,L^FS',
      '^XZ',
    ]);
    expect(epcPcWord('30764433400D1EC000000002')).toBe('3000');
    expect(epcPcWord('0'.repeat(60))).toBe('7800'); // Zebra's 240-bit example
    expect(epcPcWord('0'.repeat(124))).toBe('F800');
    expect(() => new ZplLabelBuilder().readBackEpc({ epcBytes: 25 })).toThrow(/whole 16-bit words/);
    expect(() => new ZplLabelBuilder().readBackEpc({ epcBytes: 26, maxBytes: 300 })).toThrow(/maxBytes/);
  });

  it('writes NFC tag data in whole 4-byte blocks from block 4 with ^WT and reads it back with ^RT', () => {
    const zpl = new ZplLabelBuilder()
      .writeNfcTag(new Uint8Array([0x03, 0x05, 0xd1, 0x01, 0x01, 0x55, 0x00, 0xfe, 0xab]))
      .readBackNfcTag(3)
      .toString();
    expect(zpl.split('\n')).toEqual([
      '^XA',
      '^WT4,0,1,0,1,N^FD0305D101015500FEAB000000^FS',
      '^RT2,4,3,1,0,1^FS',
      '^FH_^HV2,24,NFC:,_0D_0A,L^FS',
      '^XZ',
    ]);
    expect(() => new ZplLabelBuilder().writeNfcTag(new Uint8Array())).toThrow(/empty/);
    expect(() => new ZplLabelBuilder().readBackNfcTag(33)).toThrow(/blocks must be/);
    expect(() => new ZplLabelBuilder().readBackNfcTag(1, { appliesTo: 'X' as 'L' })).toThrow(/appliesTo/);
  });

  it('accepts EPCs in whole 16-bit words only', () => {
    expect(normalizeEpcHexWords('3074257bf7194e4000001a85')).toBe('3074257BF7194E4000001A85');
    for (const bad of ['30743', 'XYZW', '']) expect(() => normalizeEpcHexWords(bad)).toThrow(/EPC/);
  });
});

describe('^FH field hex', () => {
  it('round-trips control characters, prefixes, commas and the indicator', () => {
    const text = 'EPC:\r\n^~,_x';
    expect(encodeFieldHex(text)).toBe('EPC:_0D_0A_5E_7E_2C_5Fx');
    expect(decodeFieldHex(encodeFieldHex(text))).toBe(text);
    expect(decodeFieldHex('_zz_4')).toBe('_zz_4');
  });
});
