/**
 * The scanner's eye for every symbol on a label: QR, DataMatrix and Code 128 decoded by `zxing-wasm`
 * (its WebAssembly read from the installed package, nothing fetched), each with the AIM symbology
 * identifier a real scanner prefixes (ISO/IEC 15424: `]Q1`, `]d1`/`]d2`, `]C0`/`]C1`) and, for GS1
 * symbols, the data as a scanner transmits it: GS (0x1D) where the symbol has FNC1 as a separator.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import type * as ZxingReaderModule from 'zxing-wasm/reader';

export interface SymbolDecode {
  aimId: string;
  /** The text, or for GS1 symbols (`]d2`, `]C1`) the raw data with GS separators. */
  data: string;
  /** Bounding box of the symbol in pixels. */
  bounds: { x0: number; y0: number; x1: number; y1: number };
}

let reader: Promise<typeof ZxingReaderModule> | null = null;

function loadReader(): Promise<typeof ZxingReaderModule> {
  reader ??= import('zxing-wasm/reader').then((m) => {
    const bytes = readFileSync(createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm'));
    const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    m.prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
    return m;
  });
  return reader;
}

/** Order of the lines a read sends: the QR first, then DataMatrix, then Code 128. */
const ORDER = [']Q', ']d', ']C'];

/** Every QR, DataMatrix and Code 128 symbol on an image, QR first, each once. */
export async function decodeSymbolsImage(image: PNG): Promise<SymbolDecode[]> {
  const { readBarcodes } = await loadReader();
  const results = await readBarcodes(
    { data: new Uint8ClampedArray(image.data), width: image.width, height: image.height, colorSpace: 'srgb' },
    { formats: ['QRCode', 'DataMatrix', 'Code128'], tryHarder: true, maxNumberOfSymbols: 8 },
  );
  return results
    .filter((r) => r.isValid)
    .map((r): SymbolDecode => {
      const gs1 = r.symbologyIdentifier === ']d2' || r.symbologyIdentifier === ']C1';
      const p = r.position;
      const xs = [p.topLeft.x, p.topRight.x, p.bottomLeft.x, p.bottomRight.x];
      const ys = [p.topLeft.y, p.topRight.y, p.bottomLeft.y, p.bottomRight.y];
      return {
        aimId: r.symbologyIdentifier,
        data: gs1 ? Buffer.from(r.bytes).toString('latin1') : r.text,
        bounds: { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) },
      };
    })
    .sort((a, b) => ORDER.indexOf(a.aimId.slice(0, 2)) - ORDER.indexOf(b.aimId.slice(0, 2)));
}

export function decodeSymbolsPng(png: Buffer): Promise<SymbolDecode[]> {
  return decodeSymbolsImage(PNG.sync.read(png));
}
