/**
 * The ZPL the print head sees: the received format without what is not printed (RFID fields, `^HV`,
 * `^RS`), with fields filled from `^FN` values, optionally with the QR data swapped (wrong-content
 * fault) and `VOID` printed over it (a tag that could not be encoded).
 */
import type { LabelFormat, LabelField } from '../printer/format.js';
import { splitQrData } from '../printer/format.js';

export interface PrintableOptions {
  widthDots: number;
  lengthDots: number;
  /** Field values by `^FN` number (data and RFID reads). */
  fieldValues: ReadonlyMap<number, string>;
  /** Replaces the data of every QR code (the wrong-content fault). */
  qrPayload?: (payload: string) => string;
  /** Prints VOID over the first `voidLengthDots` dot rows. */
  voidLengthDots?: number;
}

export function printableZpl(format: LabelFormat, o: PrintableOptions): string {
  const out = ['^XA', `^PW${o.widthDots}`, `^LL${o.lengthDots}`];
  for (const item of format.items) {
    if (item.kind === 'command') {
      if (!['RS', 'PW', 'LL'].includes(item.command.name)) out.push(item.command.raw);
      continue;
    }
    const f = item.field;
    if (f.kind === 'rfid' || f.kind === 'nfc' || f.kind === 'hostVerification') continue;
    out.push(printableField(f, o));
  }
  if (o.voidLengthDots !== undefined)
    out.push(...voidOverlay(o.widthDots, Math.min(o.voidLengthDots, o.lengthDots)));
  out.push('^XZ');
  return out.join('\n');
}

function printableField(f: LabelField, o: PrintableOptions): string {
  let cmds = f.commands.map((c) => c.raw);
  const qr = f.kind === 'qr' && f.data !== undefined ? splitQrData(f.data) : null;
  if (qr && o.qrPayload) {
    const data = `${qr.switches},${o.qrPayload(qr.payload)}`;
    cmds = f.commands.filter((c) => c.name !== 'FH').map((c) => (c.name === 'FD' ? `^FD${data}` : c.raw));
  }
  const value = f.fieldNumber === undefined ? undefined : o.fieldValues.get(f.fieldNumber);
  if (f.data === undefined && value !== undefined) {
    const end = cmds[cmds.length - 1] === '^FS' ? cmds.length - 1 : cmds.length;
    cmds.splice(end, 0, `^FD${value.replace(/[\^~]/g, ' ')}`);
  }
  return cmds.join('');
}

/** Rows of "VOID" in the scalable font, as an RFID printer prints over a label it could not encode. */
function voidOverlay(widthDots: number, lengthDots: number): string[] {
  const h = Math.max(40, Math.min(200, Math.floor(lengthDots / 3)));
  const w = Math.floor(h * 0.8);
  const rows: string[] = [];
  for (let y = 0; y + h <= lengthDots || y === 0; y += h) {
    for (let x = 0; x < widthDots; x += w * 5) rows.push(`^FO${x},${y}^A0N,${h},${w}^FDVOID^FS`);
  }
  return rows;
}
