/**
 * The symbols beyond the QR code (DataMatrix, GS1-128): drawn with `bwip-js` (one encoder per symbology:
 * the QR stays with `qrcode`) and decoded offline with `zxing-wasm`, whose WebAssembly is loaded from the
 * package, never fetched. A decoded GS1 symbol (AIM `]d2`, `]C1`) is turned into the human-readable
 * element string before it is compared with the job.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { toBuffer } from 'bwip-js/node';
import { PNG } from 'pngjs';
import type * as ZxingReaderModule from 'zxing-wasm/reader';
import type { ReadResult } from 'zxing-wasm/reader';
import {
  gs1ElementsToRaw,
  gs1RawToHri,
  type AidcEnvelopeClaims,
  type Gs1Element,
  type LabelCarrier,
  type ZplDataMatrixContent,
  type ZplSymbolData,
} from '@dpp/shared';
import type { EffectiveTemplate } from './template.js';
import { AgentError } from '../errors.js';

/** The symbologies drawn here. */
export type SymbolKind = 'datamatrix' | 'gs1-128';

type ZxingReader = typeof ZxingReaderModule;
let reader: Promise<ZxingReader> | null = null;

/** zxing-wasm with its wasm read from the installed package (no network, the same bytes every run). */
function loadReader(): Promise<ZxingReader> {
  reader ??= import('zxing-wasm/reader').then((m) => {
    const bytes = readFileSync(createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm'));
    const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    m.prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
    return m;
  });
  return reader;
}

/** One symbol decoded from an image. */
export interface DecodedSymbol {
  /** AIM symbology identifier (ISO/IEC 15424): `]Q1`, `]d1`, `]d2`, `]C0`, `]C1`. */
  aimId: string;
  /** Text of a non-GS1 symbol; for GS1 symbols the raw data with GS separators (no leading FNC1). */
  data: string;
}

/** Every QR, DataMatrix and Code 128 symbol zxing finds in a PNG. */
export async function decodeSymbolsPng(png: Buffer): Promise<DecodedSymbol[]> {
  const { readBarcodes } = await loadReader();
  const image = PNG.sync.read(png);
  const results = await readBarcodes(
    { data: new Uint8ClampedArray(image.data), width: image.width, height: image.height, colorSpace: 'srgb' },
    { formats: ['QRCode', 'DataMatrix', 'Code128'], tryHarder: true, maxNumberOfSymbols: 8 },
  );
  return results.filter((r) => r.isValid).map(decodedSymbol);
}

function decodedSymbol(r: ReadResult): DecodedSymbol {
  const gs1 = r.symbologyIdentifier === ']d2' || r.symbologyIdentifier === ']C1';
  return { aimId: r.symbologyIdentifier, data: gs1 ? Buffer.from(r.bytes).toString('latin1') : r.text };
}

/**
 * The carrier a decoded symbol is, with its content as the evidence records it (GS1 data as the
 * human-readable element string), or null for a symbol that is none of the label's carriers (a plain
 * Code 128, GS1 data that does not parse).
 *
 * @example
 * symbolCarrier({ aimId: ']C1', data: '0110950600830521211' }); // { type: 'gs1-128', data: '(01)10950600830521(21)1' }
 */
export function symbolCarrier(s: DecodedSymbol): LabelCarrier | null {
  const hri = (): string | null => {
    try {
      return gs1RawToHri(s.data);
    } catch {
      return null;
    }
  };
  switch (s.aimId.slice(0, 2)) {
    case ']Q':
      return { type: 'qr', data: s.data };
    case ']d': {
      if (s.aimId !== ']d2') return { type: 'datamatrix', content: 'digital-link', data: s.data };
      const data = hri();
      return data === null ? null : { type: 'datamatrix', content: 'element-string', data };
    }
    case ']C': {
      const data = s.aimId === ']C1' ? hri() : null;
      return data === null ? null : { type: 'gs1-128', data };
    }
    default:
      return null;
  }
}

/** The text bwip-js takes with `parse` and `parsefnc`: FNC1 as `^FNC1`, `^` and non-printables as `^NNN`. */
function bwipText(symbol: ZplSymbolData): string {
  let text = symbol.gs1 ? '^FNC1' : '';
  for (const ch of symbol.data) {
    const code = ch.charCodeAt(0);
    if (ch === '\x1d') text += '^FNC1';
    else if (code < 0x20 || code > 0x7e || ch === '^') text += '^' + String(code).padStart(3, '0');
    else text += ch;
  }
  return text;
}

/** bwip-js units per module at scale 1: two for a DataMatrix, one for a Code 128 bar. */
const BWIP_UNITS_PER_MODULE: Record<SymbolKind, number> = { datamatrix: 2, 'gs1-128': 1 };

/** Modules across a PNG `symbolPng` drew at `scale`, quiet zones included. */
export function modulesAcross(kind: SymbolKind, png: Buffer, scale: number): number {
  // PNG IHDR: the width is the big-endian 32-bit integer at byte 16.
  return png.readUInt32BE(16) / (scale * BWIP_UNITS_PER_MODULE[kind]);
}

/**
 * A PNG of `symbol` drawn by bwip-js: `scale` times its units per module (two for a DataMatrix), a white
 * background (bwip-js draws on a transparent one by default, which no decoder reads) and the quiet zone of
 * the symbology around it (DataMatrix 1 module, ISO/IEC 16022 §5.1; Code 128 10 modules, ISO/IEC 15417
 * §4.4.2). bwip-js counts padding in units at scale 1.
 */
export function symbolPng(
  kind: SymbolKind,
  symbol: ZplSymbolData,
  o: { scale: number; barHeightMm?: number },
): Promise<Buffer> {
  const quiet = kind === 'datamatrix' ? BWIP_UNITS_PER_MODULE.datamatrix : 10;
  return toBuffer({
    bcid: kind === 'datamatrix' ? 'datamatrix' : 'code128',
    text: bwipText(symbol),
    parse: true,
    parsefnc: true,
    scale: o.scale,
    ...(kind === 'gs1-128' ? { height: o.barHeightMm ?? 10 } : {}),
    includetext: false,
    backgroundcolor: 'FFFFFF',
    paddingwidth: quiet,
    paddingheight: kind === 'datamatrix' ? quiet : 2,
  }).catch((err: unknown) => {
    throw new AgentError('RENDER_FAILED', `bwip-js could not draw the ${kind}`, { cause: err });
  });
}

/**
 * Proves one symbol: its PNG decodes (zxing) to exactly the carrier the job expects. Throws
 * `SYMBOL_MISMATCH` with what was decoded otherwise. Returns the decoded carrier.
 */
export async function proveSymbolPng(png: Buffer, expected: LabelCarrier): Promise<LabelCarrier> {
  const decoded = (await decodeSymbolsPng(png)).map(symbolCarrier);
  const same = decoded.find((c) => c !== null && c.type === expected.type);
  if (!same || JSON.stringify(same) !== JSON.stringify(expected)) {
    throw new AgentError(
      'SYMBOL_MISMATCH',
      `the rendered ${expected.type} does not decode to the job's data`,
      {
        details: { expected, decoded },
      },
    );
  }
  return same;
}

/** The symbols beyond the QR code a template asks for, with what each carries. */
export function labelSymbols(
  claims: AidcEnvelopeClaims,
  template: Pick<EffectiveTemplate, 'dataMatrix' | 'gs1128'>,
): { dataMatrix: ZplDataMatrixContent | null; gs1128: Gs1Element[] | null } {
  const elements: Gs1Element[] = [
    { ai: '01', value: claims.gtin },
    { ai: '21', value: claims.serial },
  ];
  return {
    dataMatrix:
      template.dataMatrix === 'element-string'
        ? { gs1: elements }
        : template.dataMatrix === 'digital-link'
          ? { text: claims.digital_link }
          : null,
    gs1128: template.gs1128 ? elements : null,
  };
}

/** What a DataMatrix with `content` encodes. */
export function dataMatrixSymbol(content: ZplDataMatrixContent): ZplSymbolData {
  return 'gs1' in content
    ? { gs1: true, data: gs1ElementsToRaw(content.gs1) }
    : { gs1: false, data: content.text };
}
