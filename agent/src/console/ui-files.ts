/**
 * The console page's static files (`ui/`: index.html, app.css and the page's JavaScript modules), served at `/` and `/ui/<file>`
 * under a strict Content-Security-Policy: scripts, styles, images and connections from this origin only,
 * no inline code, no framing.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONSOLE_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Headers every console answer carries (the API's JSON too). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** One flat folder of plain names: nothing a path could climb out of. */
const FILE_NAME = /^[a-z0-9][a-z0-9-]*\.(?:html|js|css|svg|png)$/;

/**
 * The `ui/` folder beside this module when it runs from source (tsx) or as an ES module; null when
 * bundled to CommonJS (the desktop app), which passes its own `uiDir`.
 */
export function defaultUiDir(): string | null {
  const here: unknown = import.meta.url;
  return typeof here === 'string' && here.startsWith('file:') ? fileURLToPath(new URL('./ui/', here)) : null;
}

export interface UiFile {
  body: Buffer;
  type: string;
}

/** The file for a request path (`/` is index.html), or null when there is no such file. */
export async function readUiFile(uiDir: string, urlPath: string): Promise<UiFile | null> {
  const name = urlPath === '/' ? 'index.html' : urlPath.startsWith('/ui/') ? urlPath.slice(4) : null;
  if (name === null || !FILE_NAME.test(name)) return null;
  try {
    return { body: await readFile(path.join(uiDir, name)), type: TYPES[path.extname(name)]! };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
