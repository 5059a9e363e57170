import { describe, expect, it } from 'vitest';
import PDFDocument from 'pdfkit';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { decodeQrPdfImages, pdfImages } from './pdf.js';

const LINK = 'https://dpp.example.com/01/09506000134352/21/1001';

/** A PDF with `png` placed on its page, by pdfkit. */
function pdfWith(png: Buffer): Promise<Buffer> {
  const doc = new PDFDocument({ size: [200, 200], margin: 0 });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.image(png, 10, 10, { width: 180 });
  doc.end();
  return done;
}

/** The QR as an opaque PNG of the given colour type: pdfkit embeds its IDAT as is, with PNG predictors. */
async function opaquePng(colorType: 0 | 2): Promise<Buffer> {
  const rgba = PNG.sync.read(await QRCode.toBuffer(LINK, { type: 'png', scale: 4 }));
  return PNG.sync.write(rgba, { colorType, inputHasAlpha: true });
}

describe('QR codes embedded in PDF images', () => {
  it('reads a gray PNG embedded with FlateDecode and /Predictor 15', async () => {
    const pdf = await pdfWith(await opaquePng(0));
    const [image] = pdfImages(pdf);
    expect(image).toMatchObject({ colorSpace: 'DeviceGray', filters: ['FlateDecode'] });
    expect(image!.predictor).toMatchObject({ predictor: 15, colors: 1 });
    expect(decodeQrPdfImages(pdf)).toBe(LINK);
  });

  it('reads an RGB PNG embedded with /Predictor 15 and /Colors 3', async () => {
    const pdf = await pdfWith(await opaquePng(2));
    expect(pdfImages(pdf)[0]!.predictor).toMatchObject({ predictor: 15, colors: 3 });
    expect(decodeQrPdfImages(pdf)).toBe(LINK);
  });

  it('reads an RGBA PNG, which pdfkit splits into an RGB image and a soft mask', async () => {
    const pdf = await pdfWith(await QRCode.toBuffer(LINK, { type: 'png', scale: 4 }));
    expect(
      pdfImages(pdf)
        .map((i) => i.colorSpace)
        .sort(),
    ).toEqual(['DeviceGray', 'DeviceRGB']);
    expect(decodeQrPdfImages(pdf)).toBe(LINK);
  });

  it('finds nothing in a PDF without images', async () => {
    const doc = new PDFDocument({ size: [100, 100] });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
    doc.text('no QR here');
    doc.end();
    expect(decodeQrPdfImages(await done)).toBeNull();
  });
});
