/**
 * A PDF label for office printers (pdfkit): the page is the label size, the QR is the PNG made by
 * `qrcode` (the same image whose decode proves the link), text lines beside it. No RFID.
 */
import PDFDocument from 'pdfkit';
import type { AidcEnvelopeClaims } from '@dpp/shared';
import { AgentError } from '../errors.js';
import { qrModuleCount, qrPng } from './qr.js';
import { pdfText, type EffectiveTemplate } from './template.js';

const PT_PER_MM = 72 / 25.4;

export interface RenderedPdf {
  language: 'pdf';
  payload: Buffer;
  /** The QR image placed on the page. */
  qrPng: Buffer;
  rfid: false;
  omittedLines: number;
}

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
  if (qr + 2 * margin > h || qr + 2 * margin > w) {
    throw new AgentError(
      'TEMPLATE_TOO_SMALL',
      `the QR does not fit a ${template.widthMm} x ${template.heightMm} mm page`,
    );
  }
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
  doc.image(png, margin, margin, { width: qr, height: qr });
  const fontSize = 7;
  const x = 2 * margin + qr;
  let y = margin;
  let omitted = 0;
  doc.font('Helvetica').fontSize(fontSize);
  for (const line of template.textLines) {
    if (y + fontSize > h - margin || x + 10 > w - margin) {
      omitted++;
      continue;
    }
    doc.text(pdfText(line), x, y, { width: w - x - margin, lineBreak: false, ellipsis: true });
    y += fontSize * 1.3;
  }
  doc.end();
  await done;
  return { language: 'pdf', payload: Buffer.concat(chunks), qrPng: png, rfid: false, omittedLines: omitted };
}
