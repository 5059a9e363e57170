/**
 * A ZPL label: the QR code carries the Digital Link (`^BQN,2,<mag>^FDMA,<link>^FS`: the switches first,
 * or a printer eats the first characters), text lines beside it, and with RFID the SGTIN-96 written by
 * `^RFW` then read back with `^RFR` + `^HV` so the host can compare before attesting (an SGTIN-198 with its PC
 * word first, see the shared writer), and with NFC the Digital Link as an NDEF URI record written by `^WT` and
 * read back by `^RT` + `^HV` (docs/device-protocol.md). `^RS` states the
 * error handling, E (the printer stops in error mode with the format held), never the silent factory
 * default N that drops the format and tells the host nothing.
 */
import {
  NFC_MAX_READ_BACK_BLOCKS,
  NFC_TYPE2_BLOCK_BYTES,
  ZplLabelBuilder,
  envelopeEpc,
  ndefUriTagData,
  type AidcEnvelopeClaims,
} from '@dpp/shared';
import { AgentError } from '../errors.js';
import { qrModuleCount } from './qr.js';
import { labelText, type EffectiveTemplate } from './template.js';

/** Tries per tag before the `^RS` error handling applies. */
export const RFID_TRIES = 3;

export interface RenderedZpl {
  language: 'zpl';
  payload: Buffer;
  zpl: string;
  /** Whether the format writes and reads back the EPC. */
  rfid: boolean;
  /** Whether the format writes and reads back the NFC tag's NDEF URI record. */
  nfc: boolean;
  /** Text lines that did not fit the label. */
  omittedLines: number;
}

export function dotsOf(mm: number, dpi: number): number {
  return Math.round((mm * dpi) / 25.4);
}

export function renderZplLabel(claims: AidcEnvelopeClaims, template: EffectiveTemplate): RenderedZpl {
  const dpi = template.dpi;
  const width = dotsOf(template.widthMm, dpi);
  const length = dotsOf(template.heightMm, dpi);
  const margin = dotsOf(1.5, dpi);
  const qr = qrModuleCount(claims.digital_link) * template.qrMagnification;
  if (qr + 2 * margin > length || qr + 2 * margin > width) {
    throw new AgentError(
      'TEMPLATE_TOO_SMALL',
      `a ${qr}-dot QR does not fit a ${template.widthMm} x ${template.heightMm} mm label at ${dpi} dpi`,
      { details: { qrDots: qr, widthDots: width, lengthDots: length } },
    );
  }
  const b = new ZplLabelBuilder({ widthDots: width, lengthDots: length, utf8: true });
  const nfcData = template.nfc ? nfcTagData(claims.digital_link) : null;
  if (template.rfid || template.nfc) b.rfidSetup({ tries: RFID_TRIES, onError: 'E' });
  b.qr(margin, margin, claims.digital_link, {
    magnification: template.qrMagnification,
    errorCorrection: 'M',
  });

  // Text to the right of the QR, or below it when the right side is too narrow.
  const textHeight = Math.max(12, dotsOf(2.5, dpi));
  const step = textHeight + Math.round(textHeight / 3);
  const right = width - (2 * margin + qr) >= dotsOf(12, dpi);
  const x = right ? 2 * margin + qr : margin;
  let y = right ? margin : 2 * margin + qr;
  const maxChars = Math.floor((width - x - margin) / (textHeight * 0.6));
  let omitted = 0;
  for (const line of template.textLines) {
    const text = [...labelText(line)].slice(0, maxChars).join('').trimEnd();
    if (text.length === 0) continue;
    if (y + textHeight > length - margin || maxChars < 1) {
      omitted++;
      continue;
    }
    b.text(x, y, text, { height: textHeight });
    y += step;
  }
  if (template.rfid) {
    const epc = envelopeEpc(claims).hex;
    b.writeEpc(epc).readBackEpc({ epcBytes: epc.length / 2 });
  }
  if (nfcData) b.writeNfcTag(nfcData).readBackNfcTag(Math.ceil(nfcData.length / NFC_TYPE2_BLOCK_BYTES));
  const zpl = b.toString() + '\n';
  return {
    language: 'zpl',
    payload: Buffer.from(zpl, 'utf8'),
    zpl,
    rfid: template.rfid,
    nfc: template.nfc ?? false,
    omittedLines: omitted,
  };
}

/** The NDEF TLV of the Digital Link, refused when its read-back would not fit one `^HV` answer. */
function nfcTagData(link: string): Uint8Array {
  const data = ndefUriTagData(link);
  const blocks = Math.ceil(data.length / NFC_TYPE2_BLOCK_BYTES);
  if (blocks > NFC_MAX_READ_BACK_BLOCKS) {
    throw new AgentError(
      'TEMPLATE_TOO_SMALL',
      `the Digital Link's NDEF record (${data.length} bytes) is longer than one NFC read-back returns (${NFC_MAX_READ_BACK_BLOCKS * NFC_TYPE2_BLOCK_BYTES})`,
      { details: { bytes: data.length } },
    );
  }
  return data;
}
