/**
 * The QR proof of a render: a PNG of the QR made with `qrcode` from the data the label actually carries,
 * decoded back with `jsqr`, must equal the job's Digital Link. For ZPL the data is taken from the rendered
 * bytes as a printer reads them (the `^BQ` field data minus its switches), so a label whose switches are
 * missing, which would lose the first characters of the link on a real printer, fails here.
 */
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { ZplTokenizer } from '@dpp/shared';
import { AgentError } from '../errors.js';

/** Modules per side of the QR `qrcode` makes for `data` (level M), to lay out a label. */
export function qrModuleCount(data: string): number {
  return QRCode.create(data, { errorCorrectionLevel: 'M' }).modules.size;
}

/**
 * Modules per side of the QR a ZPL printer draws for `data` (level M): `^BQ` in automatic mode encodes a
 * text such as a URI in byte mode throughout, so its symbol can be a version larger than the mixed-mode
 * one `qrcode` makes (a Digital Link's digit runs are numeric segments there).
 */
export function zplQrModuleCount(data: string): number {
  return Math.max(
    qrModuleCount(data),
    QRCode.create([{ data: Buffer.from(data, 'utf8'), mode: 'byte' }], { errorCorrectionLevel: 'M' }).modules
      .size,
  );
}

/** A PNG of the QR for `data`: level M, 4-module quiet zone, `scale` pixels per module. */
export function qrPng(data: string, scale = 4): Promise<Buffer> {
  return QRCode.toBuffer(data, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale });
}

/** Decodes the first QR of a PNG, or null. */
export function decodeQrPng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  const code = jsQR(
    new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length),
    image.width,
    image.height,
  );
  return code ? code.data : null;
}

/**
 * The data a printer encodes for the first `^BQ` field of a format (ZPL II Programming Guide, ^BQ): the
 * `^FD` text after its switches, error correction level then input mode then a comma (`MA,`). Without the
 * switches a printer takes the first characters of the data as switches; so do we.
 */
export function zplQrData(zpl: string): string | null {
  const tokens = new ZplTokenizer().push(zpl).concat(new ZplTokenizer().flush());
  let inQr = false;
  for (const t of tokens) {
    if (t.kind !== 'command') continue;
    const { name, params } = t.command;
    if (name === 'BQ') inQr = true;
    else if (name === 'FD' && inQr) return stripQrSwitches(params);
    else if (name === 'FS') inQr = false;
  }
  return null;
}

function stripQrSwitches(fd: string): string {
  // <ecl><mode>,<data> with ecl in H Q M L and mode A (automatic) or M (manual, then a character mode).
  const m = /^([HQML])A,(.*)$/s.exec(fd) ?? /^([HQML])M,[NABK](.*)$/s.exec(fd);
  if (m) return m[2]!;
  return fd.slice(3); // what a printer does: the first three characters are taken as switches
}

/** Makes the preview PNG for `data` and proves it decodes to `expected`. */
export async function provenQrPreview(data: string, expected: string): Promise<Buffer> {
  const png = await qrPng(data);
  const decoded = decodeQrPng(png);
  if (decoded !== expected) {
    throw new AgentError('QR_MISMATCH', 'the rendered QR does not decode to the job Digital Link', {
      details: { expected, decoded },
    });
  }
  return png;
}
