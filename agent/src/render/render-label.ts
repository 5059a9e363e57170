/**
 * Renders the label of one envelope for one printer and proves it: the payload bytes, a preview PNG of the
 * QR that decodes to the Digital Link, and the render manifest with their hashes.
 */
import { envelopeEpc, type AidcEnvelopeClaims, type RenderManifest } from '@dpp/shared';
import type { PrinterConfig } from '../config/index.js';
import { AgentError } from '../errors.js';
import { renderManifest } from './manifest.js';
import { renderPdfLabel } from './pdf.js';
import { decodeQrPng, provenQrPreview, zplQrData } from './qr.js';
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
  let payload: Buffer;
  let preview: Buffer;
  let rfid: boolean;
  let nfc = false;
  if (printer.language === 'zpl') {
    const r = renderZplLabel(claims, template);
    const data = zplQrData(r.zpl);
    if (data === null) throw new AgentError('RENDER_FAILED', 'the rendered format has no QR field');
    preview = await provenQrPreview(data, claims.digital_link);
    payload = r.payload;
    rfid = r.rfid;
    nfc = r.nfc;
  } else {
    const r = await renderPdfLabel(claims, template, now);
    if (decodeQrPng(r.qrPng) !== claims.digital_link)
      throw new AgentError('QR_MISMATCH', 'the QR image on the page does not decode to the job Digital Link');
    preview = r.qrPng;
    payload = r.payload;
    rfid = false;
  }
  const manifest = renderManifest({
    claims,
    language: printer.language,
    templateId: template.id,
    payload,
    decodedLink: claims.digital_link,
    rfid,
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
