/**
 * Finding the QR of a PDF label without a PDF renderer: the image XObjects of the file (ISO 32000-1 §8.9.5,
 * `/Subtype /Image`), inflated (§7.4.4 FlateDecode, with the PNG row predictors of `/DecodeParms`
 * `/Predictor` >= 10), turned into RGBA and handed to jsQR. The labels the print floor's agent makes are
 * pdfkit PDFs with the QR as an embedded PNG, which this reads; a QR drawn as vector paths is not an image,
 * and needs the page rasterised first (`pdftoppm`).
 */
import { constants, inflateSync } from 'node:zlib';
import { decodeQrImage, type RgbaImage } from './qr.js';

export interface PdfImage {
  width: number;
  height: number;
  bitsPerComponent: number;
  colorSpace: string;
  /** `/Decode [1 0]`: a gray image with inverted values. */
  inverted: boolean;
  filters: string[];
  predictor: { predictor: number; colors: number; bitsPerComponent: number; columns: number } | undefined;
  data: Buffer;
}

const num = (dict: string, key: string): number | undefined => {
  const m = new RegExp(`/${key}\\s+(\\d+)(?!\\s+\\d+\\s+R)`).exec(dict);
  return m ? Number(m[1]) : undefined;
};

function streamData(pdf: Buffer, text: string, start: number, dict: string): Buffer {
  const length = num(dict, 'Length');
  if (length !== undefined && start + length <= pdf.length) {
    const after = text.slice(start + length, start + length + 12);
    if (/^\s*endstream/.test(after)) return pdf.subarray(start, start + length);
  }
  const end = text.indexOf('endstream', start);
  let stop = end < 0 ? pdf.length : end;
  if (text[stop - 1] === '\n') stop--;
  if (text[stop - 1] === '\r') stop--;
  return pdf.subarray(start, stop);
}

/** The dictionary of indirect object `n g` (`n g obj << … >>`), as pdfkit writes `/DecodeParms 9 0 R`. */
function indirectDict(text: string, n: string, g: string): string | undefined {
  return new RegExp(`(?:^|\\s)${n}\\s+${g}\\s+obj\\s*<<([^>]*)>>`).exec(text)?.[1];
}

/** The image XObjects of a PDF, with their raw (still encoded) stream data. */
export function pdfImages(pdf: Buffer): PdfImage[] {
  const text = pdf.toString('latin1');
  const images: PdfImage[] = [];
  const streamKeyword = />>\s*stream(\r\n|\n|\r)/g;
  let m: RegExpExecArray | null;
  while ((m = streamKeyword.exec(text)) !== null) {
    const objStart = text.lastIndexOf(' obj', m.index);
    if (objStart < 0) continue;
    const whole = text.slice(objStart, m.index + 2);
    if (!/\/Subtype\s*\/Image\b/.test(whole)) continue;
    const parmsMatch = /\/DecodeParms\s*(?:<<([^>]*)>>|(\d+)\s+(\d+)\s+R)/.exec(whole);
    const dict = parmsMatch ? whole.replace(parmsMatch[0], '') : whole;
    const parms =
      parmsMatch?.[1] ?? (parmsMatch ? indirectDict(text, parmsMatch[2]!, parmsMatch[3]!) : undefined);
    const filterMatch = /\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(dict);
    const filters = filterMatch ? [...filterMatch[1]!.matchAll(/\/(\w+)/g)].map((f) => f[1]!) : [];
    const width = num(dict, 'Width');
    const height = num(dict, 'Height');
    if (width === undefined || height === undefined) continue;
    images.push({
      width,
      height,
      bitsPerComponent: num(dict, 'BitsPerComponent') ?? 8,
      colorSpace: /\/ColorSpace\s*\/(\w+)/.exec(dict)?.[1] ?? 'unknown',
      inverted: /\/Decode\s*\[\s*1(\.0*)?\s+0(\.0*)?\s*\]/.test(dict),
      filters,
      predictor:
        parms === undefined
          ? undefined
          : {
              predictor: num(parms, 'Predictor') ?? 1,
              colors: num(parms, 'Colors') ?? 1,
              bitsPerComponent: num(parms, 'BitsPerComponent') ?? 8,
              columns: num(parms, 'Columns') ?? 1,
            },
      data: streamData(pdf, text, m.index + m[0].length, dict),
    });
  }
  return images;
}

/** PNG (RFC 2083 §6) row filters, as PDF's `/Predictor` 10 to 15 use them. */
export function unpredictPng(
  data: Buffer,
  p: { colors: number; bitsPerComponent: number; columns: number },
): Buffer {
  const rowBytes = Math.ceil((p.columns * p.colors * p.bitsPerComponent) / 8);
  const bpp = Math.max(1, Math.ceil((p.colors * p.bitsPerComponent) / 8));
  const rows = Math.floor(data.length / (rowBytes + 1));
  const out = Buffer.alloc(rows * rowBytes);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowBytes + 1)]!;
    const src = r * (rowBytes + 1) + 1;
    const dst = r * rowBytes;
    for (let i = 0; i < rowBytes; i++) {
      const x = data[src + i]!;
      const a = i >= bpp ? out[dst + i - bpp]! : 0;
      const b = r > 0 ? out[dst - rowBytes + i]! : 0;
      const c = r > 0 && i >= bpp ? out[dst - rowBytes + i - bpp]! : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + a;
      else if (type === 2) v = x + b;
      else if (type === 3) v = x + Math.floor((a + b) / 2);
      else if (type === 4) {
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      } else throw new Error(`PNG row filter ${type} is not defined`);
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}

const COMPONENTS: Record<string, number> = { DeviceGray: 1, DeviceRGB: 3 };

/** The RGBA pixels of an 8-bit DeviceGray or DeviceRGB image, or null for anything else. */
export function imageToRgba(image: PdfImage): RgbaImage | null {
  const components = COMPONENTS[image.colorSpace];
  if (components === undefined || image.bitsPerComponent !== 8) return null;
  if (image.filters.some((f) => f !== 'FlateDecode')) return null;
  let pixels: Buffer = image.data;
  try {
    if (image.filters.length > 0) pixels = inflateSync(pixels, { finishFlush: constants.Z_SYNC_FLUSH });
    if (image.predictor !== undefined && image.predictor.predictor >= 10) {
      pixels = unpredictPng(pixels, image.predictor);
    } else if (image.predictor !== undefined && image.predictor.predictor !== 1) {
      return null; // TIFF predictor 2: not used by PDF label makers we know of.
    }
  } catch {
    return null;
  }
  const { width, height } = image;
  if (pixels.length < width * height * components) return null;
  const out = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 3; c++) {
      const v = pixels[i * components + (components === 1 ? 0 : c)]!;
      out[i * 4 + c] = image.inverted ? 255 - v : v;
    }
    out[i * 4 + 3] = 255;
  }
  return { data: out, width, height };
}

/** The text of the first QR found in one of the PDF's images, or null. */
export function decodeQrPdfImages(pdf: Buffer): string | null {
  for (const image of pdfImages(pdf)) {
    const rgba = imageToRgba(image);
    const text = rgba && decodeQrImage(rgba);
    if (text) return text;
  }
  return null;
}
