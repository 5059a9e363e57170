/**
 * The console window's security settings, as plain functions `main.ts` applies and tests check: the
 * renderer is sandboxed and context-isolated with no Node, it may not leave the console's origin (no
 * navigation, no new windows, no requests elsewhere), and every answer carries the console's CSP (a
 * second layer over the agent's own header).
 */
import type { WebPreferences } from 'electron';
import { CONSOLE_CSP } from '@dpp/agent';

export function consoleWebPreferences(preload: string): WebPreferences {
  return {
    preload,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    sandbox: true,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

/** True when `url` is on the console's origin (scheme, host and port). */
export function isConsoleUrl(url: string, consoleOrigin: string): boolean {
  try {
    return new URL(url).origin === consoleOrigin;
  } catch {
    return false;
  }
}

/** Requests the console window may make: its own origin, `data:` images, the developer tools. */
export function requestAllowed(url: string, consoleOrigin: string): boolean {
  return isConsoleUrl(url, consoleOrigin) || url.startsWith('data:') || url.startsWith('devtools:');
}

/**
 * Response headers with the console's Content-Security-Policy and `nosniff` set (any CSP header of
 * another spelling replaced), in the shape `webRequest.onHeadersReceived` takes.
 */
export function withConsoleHeaders(
  headers: Record<string, string | string[]> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'content-security-policy' || lower === 'x-content-type-options') continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  out['Content-Security-Policy'] = [CONSOLE_CSP];
  out['X-Content-Type-Options'] = ['nosniff'];
  return out;
}
