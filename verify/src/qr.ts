/**
 * Reading the QR of a label image with jsQR: the image as it is, then a binarised, upscaled copy with a
 * white margin, which rescues small or low-contrast scans and QR codes drawn without a quiet zone.
 */
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
// jsqr is CommonJS with typings that declare an ES default export: Node's ESM loader hands over
// module.exports (the function, which also carries itself as `default`), a bundler the typings' default.
const jsQR: JsQr = (jsQRModule as unknown as { default?: JsQr }).default ?? (jsQRModule as unknown as JsQr);

export interface RgbaImage {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

function decode(image: RgbaImage): string | null {
  return jsQR(image.data, image.width, image.height)?.data ?? null;
}

/** Black and white at the midpoint of the image's luminance range, scaled up and framed in white. */
export function binarised(image: RgbaImage): RgbaImage {
  const { width, height, data } = image;
  const lum = new Float64Array(width * height);
  let min = 255;
  let max = 0;
  for (let i = 0; i < lum.length; i++) {
    const a = data[i * 4 + 3]! / 255;
    // Transparent pixels read as white paper.
    const y =
      (0.299 * data[i * 4]! + 0.587 * data[i * 4 + 1]! + 0.114 * data[i * 4 + 2]!) * a + 255 * (1 - a);
    lum[i] = y;
    min = Math.min(min, y);
    max = Math.max(max, y);
  }
  const threshold = (min + max) / 2;
  const scale = Math.max(1, Math.min(4, Math.ceil(600 / Math.max(width, height))));
  const margin = 16;
  const w = width * scale + 2 * margin;
  const h = height * scale + 2 * margin;
  const out = new Uint8ClampedArray(w * h * 4).fill(255);
  for (let y = 0; y < height * scale; y++) {
    for (let x = 0; x < width * scale; x++) {
      const v = lum[Math.floor(y / scale) * width + Math.floor(x / scale)]! < threshold ? 0 : 255;
      const o = ((y + margin) * w + x + margin) * 4;
      out[o] = out[o + 1] = out[o + 2] = v;
    }
  }
  return { data: out, width: w, height: h };
}

/** The text of the first QR found in an RGBA image, or null. */
export function decodeQrImage(image: RgbaImage): string | null {
  return decode(image) ?? decode(binarised(image));
}

/** The text of the first QR found in a PNG, or null. */
export function decodeQrPng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return decodeQrImage({
    data: new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length),
    width: image.width,
    height: image.height,
  });
}
