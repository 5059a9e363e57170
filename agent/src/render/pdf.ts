/**
 * A PDF label for office printers (pdfkit): the page is the label size, the QR is the PNG made by
 * `qrcode` (the same image whose decode proves the link), the DataMatrix and GS1-128 the PNGs made by
 * `bwip-js` (decoded the same way), laid out by `layout.ts`, text lines beside them. No RFID.
 */
import PDFDocument from 'pdfkit';
import type { AidcEnvelopeClaims } from '@dpp/shared';
import { gs1ElementString, gs1ElementsToRaw } from '@dpp/shared';
import { layoutLabel } from './layout.js';
import { qrModuleCount, qrPng } from './qr.js';
import { dataMatrixSymbol, labelSymbols, modulesAcross, symbolPng, type SymbolKind } from './symbols.js';
import { pdfText, type EffectiveTemplate } from './template.js';

const PT_PER_MM = 72 / 25.4;

export interface RenderedPdf {
  language: 'pdf';
  payload: Buffer;
  /** The QR image placed on the page. */
  qrPng: Buffer;
  /** The DataMatrix and GS1-128 images placed on the page (bwip-js), when the template has them. */
  symbols: Record<SymbolKind, Buffer | null>;
  rfid: false;
  omittedLines: number;
}

/** Pixels per module of the symbol images (the page scales them to their module size). */
const SYMBOL_SCALE = 4;

export async function renderPdfLabel(
  claims: AidcEnvelopeClaims,
  template: EffectiveTemplate,
  renderedAt: Date,
): Promise<RenderedPdf> {
  const w = template.widthMm * PT_PER_MM;
  const h = template.heightMm * PT_PER_MM;
  const margin = 1.5 * PT_PER_MM;
  const modules = qrModuleCount(claims.digital_link) + 8; // with the quiet zone
  // A module of at least 0.25 mm (about 3 dots at 300 dpi); bigger when the magnification asks for it.
  const moduleMm = Math.max(0.25, (template.qrMagnification * 25.4) / template.dpi);
  const qr = modules * moduleMm * PT_PER_MM;
  const fontSize = 7;
  const textWidth = (text: string) => text.length * fontSize * 0.6;
  const elementString = gs1ElementString(claims.gtin, claims.serial);
  const wanted = labelSymbols(claims, template);
  const dmPng = wanted.dataMatrix
    ? await symbolPng('datamatrix', dataMatrixSymbol(wanted.dataMatrix), { scale: SYMBOL_SCALE })
    : null;
  const bcPng = wanted.gs1128
    ? await symbolPng(
        'gs1-128',
        { gs1: true, data: gs1ElementsToRaw(wanted.gs1128) },
        {
          scale: SYMBOL_SCALE,
          barHeightMm: 10,
        },
      )
    : null;
  // Image sizes on the page: the DataMatrix at the QR's module size, GS1-128 bars of 0.25 mm (GS1 X-dimension).
  const dmSide = dmPng ? modulesAcross('datamatrix', dmPng, SYMBOL_SCALE) * moduleMm * PT_PER_MM : 0;
  const bcSize = bcPng ? pngSize(bcPng) : null;
  const barModule = 0.25 * PT_PER_MM;
  const bcWidth = bcPng ? modulesAcross('gs1-128', bcPng, SYMBOL_SCALE) * barModule : 0;
  const bcHeight = bcSize ? (bcWidth * bcSize.height) / bcSize.width : 0;
  const hri = { width: textWidth(elementString), height: fontSize };
  const layout = layoutLabel({
    width: w,
    height: h,
    margin,
    qr,
    dataMatrix: dmPng ? { side: dmSide, hri: 'gs1' in wanted.dataMatrix! ? hri : null } : null,
    gs1128: bcPng ? { width: bcWidth, height: bcHeight, hri } : null,
    minTextWidth: 10,
    describe: `${template.widthMm} x ${template.heightMm} mm page`,
  });
  const png = await qrPng(claims.digital_link, 8);
  const doc = new PDFDocument({
    size: [w, h],
    margin: 0,
    autoFirstPage: true,
    info: { Title: `${claims.gtin} ${claims.serial}`, Creator: 'dpp-agent', CreationDate: renderedAt },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  doc.image(png, layout.qr.x, layout.qr.y, { width: qr, height: qr });
  doc.font('Helvetica').fontSize(fontSize);
  const line = (text: string, x: number, y: number) =>
    doc.text(pdfText(text), x, y, { width: w - x - margin, lineBreak: false, ellipsis: true });
  if (dmPng && layout.dataMatrix) {
    const { at, hri: hriAt } = layout.dataMatrix;
    doc.image(dmPng, at.x, at.y, { width: dmSide, height: dmSide });
    if (hriAt) line(elementString, hriAt.x, hriAt.y);
  }
  if (bcPng && layout.gs1128) {
    doc.image(bcPng, layout.gs1128.at.x, layout.gs1128.at.y, { width: bcWidth, height: bcHeight });
    line(elementString, layout.gs1128.hri.x + 10 * barModule, layout.gs1128.hri.y); // under the bars
  }
  const area = layout.text;
  let y = area.y;
  let omitted = 0;
  for (const text of template.textLines) {
    if (y + fontSize > area.bottom || area.x + 10 > area.right) {
      omitted++;
      continue;
    }
    doc.text(pdfText(text), area.x, y, { width: area.right - area.x, lineBreak: false, ellipsis: true });
    y += fontSize * 1.3;
  }
  doc.end();
  await done;
  return {
    language: 'pdf',
    payload: Buffer.concat(chunks),
    qrPng: png,
    symbols: { datamatrix: dmPng, 'gs1-128': bcPng },
    rfid: false,
    omittedLines: omitted,
  };
}

function pngSize(png: Buffer): { width: number; height: number } {
  // PNG IHDR: width and height as big-endian 32-bit integers at bytes 16 and 20.
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
