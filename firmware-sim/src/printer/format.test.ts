import { tokenizeZpl, ZplLabelBuilder } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { printableZpl } from '../render/printable-zpl.js';
import { interpretFormat, splitQrData } from './format.js';

const URL = 'https://id.example.com/01/09506000134352/21/2';
const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 300 })
  .rfidSetup({ tries: 2, onError: 'P', voidLengthDots: 120 })
  .qr(20, 20, URL, { magnification: 5 })
  .text(20, 250, 'SN 2', { height: 30 })
  .writeEpc('30764433400D1EC000000002')
  .readBackEpc()
  .toString();

describe('interpretFormat', () => {
  const format = interpretFormat(tokenizeZpl(zpl));
  const fields = format.items.flatMap((i) => (i.kind === 'field' ? [i.field] : []));

  it('reads label settings and fields', () => {
    expect(format.printWidthDots).toBe(400);
    expect(format.labelLengthDots).toBe(300);
    expect(format.rfidSetup).toEqual({ tagType: '8', voidLengthDots: 120, tries: 2, onError: 'P' });
    expect(fields.map((f) => f.kind)).toEqual(['qr', 'text', 'rfid', 'rfid', 'hostVerification']);
    expect(splitQrData(fields[0]?.data ?? '')).toEqual({ switches: 'MA', payload: URL });
  });

  it('decodes the ^FH-encoded ^HV header and terminator', () => {
    expect(fields[4]?.hostVerification).toEqual({
      field: 1,
      maxBytes: 24,
      header: 'EPC:',
      terminator: '\r\n',
      appliesTo: 'L',
    });
    expect(fields[3]).toMatchObject({ rfidParams: 'R,H,0,12,E', fieldNumber: 1 });
  });

  it('prints without the RFID fields, with swapped QR data and VOID when asked', () => {
    const printed = printableZpl(format, {
      widthDots: 400,
      lengthDots: 300,
      fieldValues: new Map(),
      qrPayload: (p) => `${p}9`,
      voidLengthDots: 120,
    });
    expect(printed).not.toMatch(/\^RF|\^HV|\^RS/);
    expect(printed).toContain(`^FDMA,${URL}9^FS`);
    expect(printed).toContain('^FDVOID^FS');
  });

  it('fills a ^FN field without data from the field values', () => {
    const f = interpretFormat(tokenizeZpl('^XA^FO10,10^A0N,20,20^FN1^FS^RFR,H^FN1^FS^XZ'));
    const printed = printableZpl(f, { widthDots: 200, lengthDots: 100, fieldValues: new Map([[1, 'ABCD']]) });
    expect(printed).toContain('^FO10,10^A0N,20,20^FN1^FDABCD^FS');
  });
});
