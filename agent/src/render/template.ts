/**
 * The template a label is rendered with: the job's template (from the signed envelope) with the printer's
 * media overrides (size, magnification, text lines) and the printer's own facts (resolution, whether an
 * RFID or NFC encoder is fitted). A tag is written only when the job asks for it and the printer can. The
 * DataMatrix and GS1-128 come from the job's template as they are.
 */
import type { AidcEnvelopeClaims, LabelTemplate } from '@dpp/shared';
import type { PrinterConfig } from '../config/index.js';

export interface EffectiveTemplate extends LabelTemplate {
  /** Text lines with `{gtin}`, `{serial}` and `{digitalLink}` filled in. */
  textLines: string[];
}

export function effectiveTemplate(
  claims: AidcEnvelopeClaims,
  printer: Pick<PrinterConfig, 'dpi' | 'rfid' | 'template'> & { nfc?: boolean | undefined },
): EffectiveTemplate {
  const t = claims.label_template;
  const o = printer.template;
  const values: Record<string, string> = {
    gtin: claims.gtin,
    serial: claims.serial,
    digitalLink: claims.digital_link,
  };
  return {
    id: t.id,
    widthMm: o.widthMm ?? t.widthMm,
    heightMm: o.heightMm ?? t.heightMm,
    dpi: printer.dpi,
    qrMagnification: o.qrMagnification ?? t.qrMagnification,
    textLines: (o.textLines ?? t.textLines).map((l) =>
      l.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m),
    ),
    rfid: t.rfid && printer.rfid,
    // Printed symbols need nothing of the printer beyond printing.
    dataMatrix: t.dataMatrix ?? null,
    gs1128: t.gs1128 ?? false,
    nfc: (t.nfc ?? false) && (printer.nfc ?? false),
  };
}

/**
 * The text of a label line as the printer gets it: composed (NFC, so `é` is one character the printer's
 * font has, not `e` and a combining accent) and without control characters. The writer carries it in UTF-8
 * (`^CI28`) with `^`, `~` and `_` escaped by `^FH`. Whether every glyph prints depends on the printer's
 * font: the resident scalable font covers the Latin scripts of the EU.
 */
export function labelText(text: string): string {
  return text.normalize('NFC').replace(/\p{Cc}/gu, ' ');
}

/** Windows-1252 beyond Latin-1: what the standard PDF fonts (WinAnsiEncoding) also print. */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
/** Letters with no decomposition to a base letter. */
const BASE_LETTER: Record<string, string> = {
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ħ: 'H',
  ħ: 'h',
  ı: 'i',
  Ŧ: 'T',
  ŧ: 't',
};

function inWinAnsi(ch: string): boolean {
  const code = ch.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch);
}

/**
 * The text of a label line for a PDF label, whose standard font (Helvetica, WinAnsiEncoding) has the
 * Windows-1252 characters only: those stay (é, ß, Œ, €); any other letter becomes its base letter
 * (ź → z, Ł → L), and what has none becomes `?`, instead of the wrong glyph the font would print.
 */
export function pdfText(text: string): string {
  let out = '';
  for (const ch of labelText(text)) {
    if (inWinAnsi(ch)) out += ch;
    else if (BASE_LETTER[ch]) out += BASE_LETTER[ch];
    else {
      const base = ch.normalize('NFKD').replace(/\p{M}/gu, '');
      out += base.length > 0 && [...base].every(inWinAnsi) ? base : '?';
    }
  }
  return out;
}
