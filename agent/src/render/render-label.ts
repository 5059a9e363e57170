/**
 * Renders the label of one envelope for one printer and proves it: the payload bytes, a preview PNG of the
 * QR that decodes to the Digital Link, every other symbol decoded (ZPL: drawn by bwip-js from the data the
 * printer will take from the format; PDF: the very images on the page) and equal to what the job expects,
 * and the render manifest with their hashes and every carrier of the label.
 */
import {
  envelopeEpc,
  zplDataMatrixData,
  zplGs1128Data,
  type AidcEnvelopeClaims,
  type LabelCarrier,
  type RenderManifest,
  type ZplSymbolData,
} from '@dpp/shared';
import type { PrinterConfig } from '../config/index.js';
import { AgentError } from '../errors.js';
import { jobCarriers, renderManifest } from './manifest.js';
import { renderPdfLabel } from './pdf.js';
import { decodeQrPng, provenQrPreview, zplQrData } from './qr.js';
import { proveSymbolPng, symbolPng, type SymbolKind } from './symbols.js';
import { effectiveTemplate, type EffectiveTemplate } from './template.js';
import { renderZplLabel } from './zpl.js';

export interface RenderedLabel {
  language: 'zpl' | 'pdf';
  template: EffectiveTemplate;
  /** The exact bytes that go to the printer. */
  payload: Buffer;
  /** A PNG of the QR, decoded and compared. */
  preview: Buffer;
  /** Whether the payload writes and reads back the EPC. */
  rfid: boolean;
  /** The EPC the payload writes (upper-case hex), when `rfid`. */
  epc?: string | undefined;
  /** Whether the payload writes the Digital Link to the NFC tag and reads it back. */
  nfc?: boolean | undefined;
  manifest: RenderManifest;
}

export async function renderLabel(
  claims: AidcEnvelopeClaims,
  printer: Pick<PrinterConfig, 'language' | 'dpi' | 'rfid' | 'template'> & { nfc?: boolean | undefined },
  now: Date = new Date(),
): Promise<RenderedLabel> {
  const template = effectiveTemplate(claims, printer);
  const expected = jobCarriers(claims, template);
  let payload: Buffer;
  let preview: Buffer;
  let rfid: boolean;
  let symbolImage: (kind: SymbolKind) => Promise<Buffer | null>;
  let nfc = false;
  if (printer.language === 'zpl') {
    const r = renderZplLabel(claims, template);
    const data = zplQrData(r.zpl);
    if (data === null) throw new AgentError('RENDER_FAILED', 'the rendered format has no QR field');
    preview = await provenQrPreview(data, claims.digital_link);
    payload = r.payload;
    rfid = r.rfid;
    symbolImage = (kind) => drawnFromFormat(kind, r.zpl);
    nfc = r.nfc;
  } else {
    const r = await renderPdfLabel(claims, template, now);
    if (decodeQrPng(r.qrPng) !== claims.digital_link)
      throw new AgentError('QR_MISMATCH', 'the QR image on the page does not decode to the job Digital Link');
    preview = r.qrPng;
    payload = r.payload;
    rfid = false;
    symbolImage = (kind) => Promise.resolve(r.symbols[kind]);
  }
  const carriers: LabelCarrier[] = [];
  for (const c of expected) {
    if (c.type === 'qr') carriers.push({ type: 'qr', data: claims.digital_link });
    else if (c.type === 'datamatrix' || c.type === 'gs1-128') {
      const png = await symbolImage(c.type);
      if (!png) throw new AgentError('SYMBOL_MISMATCH', `the rendered label has no ${c.type}`);
      carriers.push(await proveSymbolPng(png, c));
    } else carriers.push(c);
  }
  const manifest = renderManifest({
    claims,
    language: printer.language,
    templateId: template.id,
    payload,
    decodedLink: claims.digital_link,
    rfid,
    carriers,
    preview,
    renderedAt: now,
  });
  return {
    language: printer.language,
    template,
    payload,
    preview,
    rfid,
    ...(rfid ? { epc: envelopeEpc(claims).hex } : {}),
    nfc,
    manifest,
  };
}

/** The symbol a printer will draw for the first field of `kind` in the format, drawn by bwip-js. */
async function drawnFromFormat(kind: SymbolKind, zpl: string): Promise<Buffer | null> {
  let symbol: ZplSymbolData | null;
  try {
    symbol = kind === 'datamatrix' ? zplDataMatrixData(zpl) : zplGs1128Data(zpl);
  } catch (err) {
    throw new AgentError('RENDER_FAILED', `the ${kind} field of the format cannot be read`, { cause: err });
  }
  return symbol && symbolPng(kind, symbol, { scale: 4, barHeightMm: 8 });
}
