/**
 * The smudged-label fault: a dark smear across the middle of the QR code, wider than any QR error
 * correction level can repair (H restores about 30% of codewords; the smear covers 40% of the rows),
 * so a real decoder gives up. Labels without a QR code get the smear across their middle.
 */
import { PNG } from 'pngjs';
import { decodeQrImage } from '../scanner/decode.js';

export function smudgePng(png: Buffer): Buffer {
  const image = PNG.sync.read(png);
  const qr = decodeQrImage(image);
  const box = qr?.bounds ?? { x0: 0, y0: 0, x1: image.width - 1, y1: image.height - 1 };
  const h = box.y1 - box.y0;
  fill(image, box.x0 - 2, box.y0 + h * 0.3, box.x1 + 2, box.y0 + h * 0.7);
  if (decodeQrImage(image)) fill(image, box.x0 - 2, box.y0 - 2, box.x1 + 2, box.y1 + 2);
  return PNG.sync.write(image);
}

function fill(image: PNG, x0: number, y0: number, x1: number, y1: number): void {
  const [xa, xb] = [Math.max(0, Math.floor(x0)), Math.min(image.width - 1, Math.ceil(x1))];
  const [ya, yb] = [Math.max(0, Math.floor(y0)), Math.min(image.height - 1, Math.ceil(y1))];
  for (let y = ya; y <= yb; y++) {
    for (let x = xa; x <= xb; x++) {
      const i = (y * image.width + x) * 4;
      image.data[i] = 20;
      image.data[i + 1] = 20;
      image.data[i + 2] = 20;
      image.data[i + 3] = 255;
    }
  }
}
