/**
 * A ZPL label: the QR code carries the Digital Link (`^BQN,2,<mag>^FDMA,<link>^FS`: the switches first,
 * or a printer eats the first characters), a DataMatrix (`^BX`, the Digital Link or the element string
 * `(01)…(21)…` with its human-readable line) and a GS1-128 (`^BC`) when the template asks for them, laid
 * out by `layout.ts`, text lines beside them; with RFID the EPC written by `^RFW` then read back with
 * `^RFR` + `^HV` so the host can compare before attesting (an SGTIN-198 with its PC word first, see the
 * shared writer), and with NFC the Digital Link as an NDEF URI record written by `^WT` and read back by
 * `^RT` + `^HV` (docs/device-protocol.md). `^RS` states the
 * error handling, E (the printer stops in error mode with the format held), never the silent factory
 * default N that drops the format and tells the host nothing.
 */
import {
  NFC_MAX_READ_BACK_BLOCKS,
  NFC_TYPE2_BLOCK_BYTES,
  ZplLabelBuilder,
  code128Modules,
  dataMatrixModules,
  envelopeEpc,
  gs1ElementString,
  ndefUriTagData,
  zplGs1128Data,
  zplGs1128FieldData,
  type AidcEnvelopeClaims,
} from '@dpp/shared';
import { AgentError } from '../errors.js';
import { layoutLabel } from './layout.js';
import { dataMatrixSymbol, labelSymbols } from './symbols.js';
import { zplQrModuleCount } from './qr.js';
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

/**
 * Dots a printer puts a `^BQ` symbol below its field origin (Zebra printers, and Zebrash after them, start
 * the QR ten dots lower than `^FO` says), so what goes under the QR leaves room for them.
 */
const ZPL_QR_DROP = 10;

export function dotsOf(mm: number, dpi: number): number {
  return Math.round((mm * dpi) / 25.4);
}

export function renderZplLabel(claims: AidcEnvelopeClaims, template: EffectiveTemplate): RenderedZpl {
  const dpi = template.dpi;
  const width = dotsOf(template.widthMm, dpi);
  const length = dotsOf(template.heightMm, dpi);
  const margin = dotsOf(1.5, dpi);
  const mag = template.qrMagnification;
  const qr = zplQrModuleCount(claims.digital_link) * mag;
  const textHeight = Math.max(12, dotsOf(2.5, dpi));
  const textWidth = (text: string) => Math.ceil(text.length * textHeight * 0.6);
  const symbols = labelSymbols(claims, template);
  const barModule = Math.max(2, dotsOf(0.25, dpi)); // GS1 X-dimension of 0.25 mm at least
  const barHeight = dotsOf(8, dpi);
  const elementString = gs1ElementString(claims.gtin, claims.serial);
  const gs1128Chars = symbols.gs1128
    ? zplGs1128Data(`^BC^FD${zplGs1128FieldData(symbols.gs1128)}^FS`)!.symbolChars
    : 0;
  const layout = layoutLabel({
    width,
    height: length,
    margin,
    qr,
    qrHeight: qr + ZPL_QR_DROP,
    dataMatrix: symbols.dataMatrix
      ? {
          side: dataMatrixModules(dataMatrixSymbol(symbols.dataMatrix)) * mag,
          hri: 'gs1' in symbols.dataMatrix ? { width: textWidth(elementString), height: textHeight } : null,
        }
      : null,
    gs1128: symbols.gs1128
      ? {
          width: code128Modules(gs1128Chars) * barModule,
          height: barHeight,
          hri: { width: textWidth(elementString), height: textHeight },
        }
      : null,
    minTextWidth: dotsOf(12, dpi),
    describe: `${template.widthMm} x ${template.heightMm} mm at ${dpi} dpi`,
  });
  const b = new ZplLabelBuilder({ widthDots: width, lengthDots: length, utf8: true });
  const nfcData = template.nfc ? nfcTagData(claims.digital_link) : null;
  if (template.rfid || template.nfc) b.rfidSetup({ tries: RFID_TRIES, onError: 'E' });
  b.qr(layout.qr.x, layout.qr.y, claims.digital_link, { magnification: mag, errorCorrection: 'M' });
  if (symbols.dataMatrix && layout.dataMatrix) {
    const { at, hri } = layout.dataMatrix;
    b.dataMatrix(at.x, at.y, symbols.dataMatrix, { moduleDots: mag });
    if (hri) b.text(hri.x, hri.y, elementString, { height: textHeight });
  }
  if (symbols.gs1128 && layout.gs1128) {
    const { at, hri } = layout.gs1128;
    // The bars start after the left quiet zone (10 modules): the printer draws from the field origin.
    b.gs1128(at.x + 10 * barModule, at.y, symbols.gs1128, { moduleDots: barModule, heightDots: barHeight });
    b.text(hri.x + 10 * barModule, hri.y, elementString, { height: textHeight });
  }

  const area = layout.text;
  const step = textHeight + Math.round(textHeight / 3);
  const maxChars = Math.floor((area.right - area.x) / (textHeight * 0.6));
  let y = area.y;
  let omitted = 0;
  for (const line of template.textLines) {
    const text = [...labelText(line)].slice(0, maxChars).join('').trimEnd();
    if (text.length === 0) continue;
    if (y + textHeight > area.bottom || maxChars < 1) {
      omitted++;
      continue;
    }
    b.text(area.x, y, text, { height: textHeight });
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
