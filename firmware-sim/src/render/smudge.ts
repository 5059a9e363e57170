/**
 * The smudged-label fault: a dark smear across the middle of every symbol on the label (QR, DataMatrix,
 * Code 128), wider than any error correction can repair (QR H restores about 30% of codewords, a
 * DataMatrix about as much; the smear covers 40% of the rows, and a Code 128 bar pattern cut across its
 * height leaves no clean scan line), so a real decoder gives up. A symbol that still decodes is blacked
 * out whole. Labels without a symbol get the smear across their middle.
 */
import { PNG } from 'pngjs';
import { decodeSymbolsImage } from '../scanner/symbols.js';

export async function smudgePng(png: Buffer): Promise<Buffer> {
  const image = PNG.sync.read(png);
  const symbols = await decodeSymbolsImage(image);
  const boxes =
    symbols.length > 0
      ? symbols.map((s) => s.bounds)
      : [{ x0: 0, y0: 0, x1: image.width - 1, y1: image.height - 1 }];
  for (const box of boxes) {
    const h = box.y1 - box.y0;
    if (h < 4)
      fill(image, box.x0 - 2, box.y0 - 40, box.x1 + 2, box.y1 + 40); // a 1D read: its line is all zxing gives
    else fill(image, box.x0 - 2, box.y0 + h * 0.3, box.x1 + 2, box.y0 + h * 0.7);
  }
  for (const left of await decodeSymbolsImage(image)) {
    const b = left.bounds;
    fill(image, b.x0 - 4, b.y0 - 4, b.x1 + 4, b.y1 + 4);
  }
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
