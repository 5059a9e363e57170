/**
 * ZPL to PNG, offline: `zpl-renderer-js` (Zebrash compiled to WebAssembly, the wasm inlined in the
 * package, nothing fetched). Loaded lazily because the module is about 9 MB.
 */
import { createRequire } from 'node:module';
import { SimError } from '../errors.js';

export interface LabelSize {
  widthDots: number;
  lengthDots: number;
  /** Dots per millimetre: 8 at 203 dpi, 12 at 300 dpi, 24 at 600 dpi. */
  dpmm: number;
}

/** Turns the ZPL of one label into a PNG. */
export interface LabelRenderer {
  render(zpl: string, size: LabelSize): Promise<Buffer>;
}

type ZplApi = {
  zplToBase64Async(zpl: string, widthMm?: number, heightMm?: number, dpmm?: number): Promise<string>;
};

let api: Promise<ZplApi> | null = null;

/**
 * Loads the CommonJS build with Node's own `require`: a bundler-aware test runner would otherwise
 * transform the 9 MB module (slow, and it warns about the source map the package does not ship).
 */
function loadApi(): Promise<ZplApi> {
  api ??= Promise.resolve()
    .then(() => createRequire(import.meta.url)('zpl-renderer-js') as { ready: Promise<{ api: ZplApi }> })
    .then(async (m) => (await m.ready).api);
  return api;
}

export class ZebrashRenderer implements LabelRenderer {
  async render(zpl: string, size: LabelSize): Promise<Buffer> {
    try {
      const { zplToBase64Async } = await loadApi();
      const b64 = await zplToBase64Async(
        zpl,
        size.widthDots / size.dpmm,
        size.lengthDots / size.dpmm,
        size.dpmm,
      );
      return Buffer.from(b64, 'base64');
    } catch (err) {
      throw new SimError('RENDER_FAILED', 'zpl-renderer-js could not render the label', {
        cause: err,
        details: { zpl },
      });
    }
  }
}

export function dpiToDpmm(dpi: 203 | 300 | 600): number {
  return { 203: 8, 300: 12, 600: 24 }[dpi];
}
