import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderManifestSchema } from '@dpp/shared';
import { decodeQrPng as simDecode, openHostLink, startPrinter, type PrinterHandle } from '@dpp/firmware-sim';
import { isAgentError } from '../errors.js';
import { claimsFor } from '@dpp/testkit/agent';
import { decodeQrPng, provenQrPreview, zplQrData } from './qr.js';
import { renderLabel } from './render-label.js';
import { effectiveTemplate, pdfText } from './template.js';
import { renderZplLabel } from './zpl.js';
import { sha256Hex } from './manifest.js';

const zebra = { language: 'zpl' as const, dpi: 203 as const, rfid: true, template: {} };

describe('ZPL label', () => {
  it('carries the link with its QR switches, RFID with error action E, the EPC and its read-back', () => {
    const claims = claimsFor('4711');
    const { zpl, rfid } = renderZplLabel(claims, effectiveTemplate(claims, zebra));
    expect(rfid).toBe(true);
    expect(zpl).toContain(`^BQN,2,4^FDMA,${claims.digital_link}^FS`);
    expect(zpl).toMatch(/\^RS8,,,3,E\n/);
    expect(zpl).toContain(`^RFW,H^FD${claims.sgtin96_epc}^FS`);
    expect(zpl).toContain('^RFR,H,0,12,E^FN1^FS');
    expect(zpl).toContain('^HV1,24,EPC:,_0D_0A,L^FS');
    expect(zpl).toContain('^PW400\n^LL240');
    expect(zpl.indexOf('^RS')).toBeLessThan(zpl.indexOf('^RFW'));
    expect(zpl).toContain('^CI28');
    expect(zpl).toMatch(/\^FH_\^FDSN 4711\^FS/);
    expect(zplQrData(zpl)).toBe(claims.digital_link);
  });

  it('writes no RFID when the job or the printer has none', () => {
    const claims = claimsFor('4712');
    const noEncoder = renderZplLabel(claims, effectiveTemplate(claims, { ...zebra, rfid: false }));
    expect(noEncoder.zpl).not.toMatch(/\^RS|\^RFW|\^HV/);
    const plain = claimsFor('4712', { label_template: { ...claims.label_template, rfid: false } });
    expect(renderZplLabel(plain, effectiveTemplate(plain, zebra)).rfid).toBe(false);
  });

  it('keeps accented text (UTF-8, ^CI28), escapes what would break the stream, and lets the printer media override the job template', () => {
    const claims = claimsFor('4713', {
      label_template: { ...claimsFor('1').label_template, textLines: ['Chaise Élégante ^XZ ~JA', '{gtin}'] },
    });
    const t = effectiveTemplate(claims, { ...zebra, dpi: 300, template: { widthMm: 60 } });
    expect(t).toMatchObject({
      widthMm: 60,
      heightMm: 30,
      dpi: 300,
      textLines: ['Chaise Élégante ^XZ ~JA', claims.gtin],
    });
    const { zpl, payload } = renderZplLabel(claims, t);
    expect(zpl).toContain('^FH_^FDChaise Élégante _5EXZ _7EJA^FS');
    expect(zpl).toContain(`^FH_^FD${claims.gtin}^FS`);
    expect(zpl.match(/\^XZ/g)).toHaveLength(1);
    expect(payload.equals(Buffer.from(zpl, 'utf8'))).toBe(true); // É is two bytes on the wire
    // Composed: an e and a combining accent in the template become the one character the font has.
    const decomposed = claimsFor('4713', {
      label_template: { ...claimsFor('1').label_template, textLines: ['Cafe\u0301\u0007'] },
    });
    expect(renderZplLabel(decomposed, effectiveTemplate(decomposed, zebra)).zpl).toContain('^FDCafé^FS');
  });

  it('refuses a template too small for the QR', () => {
    const claims = claimsFor('4714');
    const t = effectiveTemplate(claims, { ...zebra, template: { widthMm: 10, heightMm: 10 } });
    expect(() => renderZplLabel(claims, t)).toThrow(expect.objectContaining({ code: 'TEMPLATE_TOO_SMALL' }));
  });

  it('catches a QR field without its switches: the printer would lose the first characters', async () => {
    const claims = claimsFor('4715');
    const broken = `^XA^FO10,10^BQN,2,4^FD${claims.digital_link}^FS^XZ`;
    const data = zplQrData(broken)!;
    expect(data).toBe(claims.digital_link.slice(3));
    await expect(provenQrPreview(data, claims.digital_link)).rejects.toSatisfy((e) =>
      isAgentError(e, 'QR_MISMATCH'),
    );
  });
});

describe('renderLabel', () => {
  it('proves the ZPL QR with a decoded preview and hashes what it sends', async () => {
    const claims = claimsFor('5001');
    const at = new Date('2026-01-02T03:04:05.000Z');
    const r = await renderLabel(claims, zebra, at);
    expect(decodeQrPng(r.preview)).toBe(claims.digital_link);
    expect(RenderManifestSchema.parse(r.manifest)).toEqual({
      language: 'zpl',
      template: 'default',
      payloadSha256: sha256Hex(r.payload),
      payloadBytes: r.payload.length,
      digitalLink: claims.digital_link,
      qrVerified: true,
      sgtin96Epc: claims.sgtin96_epc,
      carriers: [
        { type: 'qr', data: claims.digital_link },
        { type: 'rfid', scheme: 'sgtin-96', epc: claims.sgtin96_epc },
      ],
      previewSha256: sha256Hex(r.preview),
      renderedAt: at.toISOString(),
    });
  });

  it('makes a PDF label of the template size whose QR image decodes to the link', async () => {
    const claims = claimsFor('5002');
    const r = await renderLabel(claims, { language: 'pdf', dpi: 300, rfid: false, template: {} });
    const text = r.payload.toString('latin1');
    expect(text.startsWith('%PDF-')).toBe(true);
    expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
    expect(text).toMatch(/\/MediaBox \[0 0 141\.73\d* 85\.03\d*\]/);
    expect(text).toContain('/Subtype /Image');
    expect(r.rfid).toBe(false);
    expect(decodeQrPng(r.preview)).toBe(claims.digital_link);
    expect(r.manifest).toMatchObject({
      language: 'pdf',
      qrVerified: true,
      previewSha256: sha256Hex(r.preview),
    });
    expect(r.manifest.sgtin96Epc).toBeUndefined();
  });
});

describe('text on a PDF label (standard font, Windows-1252)', () => {
  it('keeps what the font has, gives other letters their base letter, and never prints a wrong glyph', async () => {
    expect(pdfText('Chaise Élégante Łódź Straße Œuvre 5 €')).toBe('Chaise Élégante Lódz Straße Œuvre 5 €');
    expect(pdfText('Ħ ı ✓ 日本')).toBe('H i ? ??');
    const claims = claimsFor('5004', {
      label_template: { ...claimsFor('1').label_template, textLines: ['Chaise Élégante Łódź'] },
    });
    const r = await renderLabel(claims, {
      language: 'pdf',
      dpi: 300,
      rfid: false,
      template: { widthMm: 80 },
    });
    // poppler's pdftotext reads the page as a viewer shows it.
    const text = await new Promise<string>((resolve, reject) => {
      const child = execFile('pdftotext', ['-', '-'], (err, stdout) => (err ? reject(err) : resolve(stdout)));
      child.stdin!.end(r.payload);
    });
    expect(text).toContain('Chaise Élégante Lódz');
  });
});

describe('rendering again as of the same time (what resuming an attempt after a restart relies on)', () => {
  it.each([
    ['zpl', zebra],
    ['pdf', { language: 'pdf' as const, dpi: 300 as const, rfid: false, template: {} }],
  ])('gives the same %s bytes and manifest', async (_language, printer) => {
    const claims = claimsFor('5003');
    const at = new Date('2026-11-22T08:00:00.000Z');
    const first = await renderLabel(claims, printer, at);
    const again = await renderLabel(claims, printer, at);
    expect(again.payload.equals(first.payload)).toBe(true);
    expect(again.manifest).toEqual(first.manifest);
  });
});

describe('the rendered ZPL on a simulated printer (firmware-sim over TCP)', () => {
  let printer: PrinterHandle;
  beforeAll(async () => {
    printer = await startPrinter({ transport: 'tcp', port: 0 });
  });
  afterAll(() => printer?.close());

  it('prints a label whose QR decodes to the link and whose tag holds the EPC', async () => {
    const claims = claimsFor('6001');
    const r = await renderLabel(claims, zebra);
    const link = await openHostLink({ port: printer.port! });
    try {
      await link.write(r.payload);
      const answer = await link.nextResponse('hostVerification', 15_000);
      expect(answer.data).toBe(claims.sgtin96_epc);
      const [label] = await printer.waitForLabels(1, 15_000);
      expect(label!.void).toBe(false);
      expect(label!.epc).toBe(claims.sgtin96_epc);
      expect(label!.content).toBe(claims.digital_link);
      expect(simDecode(label!.png)?.data).toBe(claims.digital_link);
    } finally {
      await link.close();
    }
  });
});
