/** The scanner's eye: a real QR decode (jsQR) of a label's PNG (pngjs). */
import jsQR from 'jsqr';
import { PNG } from 'pngjs';

export interface QrDecode {
  data: string;
  /** Bounding box of the symbol in pixels. */
  bounds: { x0: number; y0: number; x1: number; y1: number };
}

export function decodeQrPng(png: Buffer): QrDecode | null {
  const image = PNG.sync.read(png);
  return decodeQrImage(image);
}

export function decodeQrImage(image: PNG): QrDecode | null {
  const pixels = new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length);
  const code = jsQR(pixels, image.width, image.height, { inversionAttempts: 'attemptBoth' });
  if (!code) return null;
  const l = code.location;
  const xs = [l.topLeftCorner.x, l.topRightCorner.x, l.bottomLeftCorner.x, l.bottomRightCorner.x];
  const ys = [l.topLeftCorner.y, l.topRightCorner.y, l.bottomLeftCorner.y, l.bottomRightCorner.y];
  return {
    data: code.data,
    bounds: { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) },
  };
}
