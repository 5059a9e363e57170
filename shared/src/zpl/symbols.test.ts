import { describe, expect, it } from 'vitest';
import { gs1ElementsToRaw } from '../gs1/element-string.js';
import {
  code128Modules,
  dataMatrixModules,
  zplDataMatrixData,
  zplDataMatrixField,
  zplGs1128Data,
  zplGs1128FieldData,
} from './symbols.js';
import { ZplLabelBuilder } from './writer.js';

const GS = '\x1d';
const gtin = { ai: '01', value: '10950600830521' };
const sn = (value: string) => ({ ai: '21', value });
const link = 'https://id.example.com/01/10950600830521/21/ABC_1?x=1';

describe('DataMatrix (^BX)', () => {
  it('writes ECC 200 with an escape character the data does not contain, FNC1 first for GS1', () => {
    const zpl = new ZplLabelBuilder()
      .dataMatrix(10, 20, { gs1: [gtin, sn('A1')] }, { moduleDots: 4 })
      .toString();
    expect(zpl).toContain('^FO10,20^BXN,4,200,,,,_^FD_1011095060083052121A1^FS');
    // `_` is in the data: the next candidate escapes, and `_` stays a plain character.
    expect(zplDataMatrixField({ gs1: [gtin, sn('A_1')] })).toEqual({
      escape: '`',
      fieldData: '`1011095060083052121A_1',
    });
    expect(zplDataMatrixField({ text: link })).toEqual({ escape: '`', fieldData: link });
    // A variable-length value followed by another gets FNC1 after it.
    expect(zplDataMatrixField({ gs1: [sn('X'), gtin] }).fieldData).toBe('_121X_10110950600830521');
  });

  it('reads back exactly what it wrote, for any set-82 serial', () => {
    for (const serial of ['A1', 'A_1', '__(x)', '(1)>2<3!"%&\'*+,-./:;=?', 'zZ09']) {
      const zpl = new ZplLabelBuilder()
        .dataMatrix(0, 0, { gs1: [gtin, sn(serial)] }, { moduleDots: 3 })
        .toString();
      expect(zplDataMatrixData(zpl)).toEqual({ gs1: true, data: gs1ElementsToRaw([gtin, sn(serial)]) });
    }
    const plain = new ZplLabelBuilder().dataMatrix(0, 0, { text: link }, { moduleDots: 3 }).toString();
    expect(zplDataMatrixData(plain)).toEqual({ gs1: false, data: link });
  });

  it('reads escapes as a printer does: doubled escape, decimal bytes, FNC1 later as GS; the default escape ~', () => {
    expect(zplDataMatrixData('^XA^BXN,4,200,,,,#^FD#121A##B#d0651#1^FS^XZ')).toEqual({
      gs1: true,
      data: `21A#BA1${GS}`,
    });
    expect(zplDataMatrixData('^XA^BXN,4,200^FDplain_1^FS^XZ')).toEqual({ gs1: false, data: 'plain_1' });
    expect(zplDataMatrixData('^XA^BQN,2,4^FDMA,x^FS^XZ')).toBeNull();
    expect(() => zplDataMatrixData('^XA^BXN,4,140^FDx^FS^XZ')).toThrow(/quality 200/);
    expect(() => zplDataMatrixData('^XA^BXN,4,200,,,,_^FD_5x^FS^XZ')).toThrow(/escape _5/);
    expect(() => zplDataMatrixData('^XA^BXN,4,200,,,,_^FH^FDx^FS^XZ')).toThrow(/\^FH/);
  });

  it('refuses data that cannot travel, and sizes the symbol for layout', () => {
    expect(() => zplDataMatrixField({ text: 'a^b' })).toThrow(/\^/);
    expect(() => zplDataMatrixField({ text: '' })).toThrow(/empty/);
    expect(() => zplDataMatrixField({ gs1: [gtin, sn('has space')] })).toThrow(/character set 82/);
    expect(() => zplDataMatrixField({ text: '_`|@#${}[]\\' })).toThrow(/every escape/);
    expect(dataMatrixModules({ gs1: true, data: '011095060083052121A1' })).toBe(16); // FNC1, 9 digit pairs, A, 1: 12 codewords
    expect(dataMatrixModules({ gs1: false, data: 'x'.repeat(62) })).toBe(32);
    expect(dataMatrixModules({ gs1: false, data: 'x'.repeat(63) })).toBe(36);
  });
});

describe('GS1-128 (^BC mode N)', () => {
  it('starts in subset C with FNC1, switches to B for the serial and writes > as >0', () => {
    expect(zplGs1128FieldData([gtin, sn('A>1')])).toBe('>;>8011095060083052121>6A>01');
    const zpl = new ZplLabelBuilder()
      .gs1128(5, 6, [gtin, sn('ABC')], { moduleDots: 2, heightDots: 80 })
      .toString();
    expect(zpl).toContain('^FO5,6^BY2^BCN,80,N,N,N,N^FD>;>8011095060083052121>6ABC^FS');
    // Digits after letters: an even run of four or more goes back to subset C.
    expect(zplGs1128FieldData([gtin, sn('A123456')])).toBe('>;>8011095060083052121>6A>5123456');
    expect(zplGs1128FieldData([gtin, sn('A123')])).toBe('>;>8011095060083052121>6A123');
    // One character left after a pair: the pair goes in subset B, so no switch precedes a lone last character.
    expect(zplGs1128FieldData([gtin, sn('5')])).toBe('>;>80110950600830521>6215');
    expect(zplGs1128FieldData([gtin, sn('A1234B')])).toBe('>;>8011095060083052121>6A1234B');
    // A GS between a variable-length value and the next AI is FNC1.
    expect(zplGs1128FieldData([sn('AB'), gtin])).toBe('>;>821>6AB>8>50110950600830521');
  });

  it('reads back exactly what it wrote, for any set-82 serial, and counts its symbol characters', () => {
    for (const serial of [
      '1',
      '12',
      'A1',
      '>',
      'A>',
      '>>>',
      '(1)>2<3!"%&\'*+,-./:;=?_',
      'zZ09',
      '12345678901234567890',
    ]) {
      const zpl = new ZplLabelBuilder()
        .gs1128(0, 0, [gtin, sn(serial)], { moduleDots: 2, heightDots: 50 })
        .toString();
      expect(zplGs1128Data(zpl)).toMatchObject({ gs1: true, data: gs1ElementsToRaw([gtin, sn(serial)]) });
    }
    // Start C, FNC1, 9 pairs, code B, A B C, check: 16 characters.
    expect(zplGs1128Data('^XA^BCN,50,N,N,N,N^FD>;>8011095060083052121>6ABC^FS^XZ')?.symbolChars).toBe(16);
    expect(code128Modules(16)).toBe(16 * 11 + 13 + 20);
  });

  it('reads the invocation codes of subsets A and B, and refuses what it does not read', () => {
    expect(zplGs1128Data('^XA^BCN,50^FDAB>0C><D>=^FS^XZ')).toMatchObject({ gs1: false, data: 'AB>C^D~' });
    expect(zplGs1128Data('^XA^BCN,50,N,N,N,N^FD>9AB>8C^FS^XZ')).toMatchObject({
      gs1: false,
      data: `AB${GS}C`,
    });
    expect(zplGs1128Data('^XA^FDx^FS^XZ')).toBeNull();
    expect(() => zplGs1128Data('^XA^BCN,50,N,N,N,D^FD(01)1^FS^XZ')).toThrow(/mode D/);
    expect(() => zplGs1128Data('^XA^BCN,50^FD>;123^FS^XZ')).toThrow(/digits in pairs/);
    expect(() => zplGs1128Data('^XA^BCN,50^FD>9ab^FS^XZ')).toThrow(/not in subset A/);
    expect(() => zplGs1128Data('^XA^BCN,50^FDa>4b^FS^XZ')).toThrow(/invocation >4/);
    expect(() => zplGs1128Data('^XA^BCN,50^FD>;^FS^XZ')).toThrow(/empty/);
  });
});
