// @ts-check
/** Light or dark: the supervisor's choice (kept in this browser), else the system's; one palette in CSS. */
import { $ } from './dom.js';

const THEME_KEY = 'dpp-console-theme';

/**
 * The desktop app's bridge (its preload), when the page runs inside it.
 * @typedef {object} DesktopBridge
 * @property {(theme: 'light' | 'dark' | 'system') => Promise<void>} [setTheme]
 * @property {() => Promise<{ appVersion: string, electronVersion: string }>} [info]
 */

/** @returns {DesktopBridge | null} */
export function desktopBridge() {
  return /** @type {{ dppDesktop?: DesktopBridge }} */ (/** @type {unknown} */ (window)).dppDesktop ?? null;
}

/** Sets the effective theme on <html>. @param {string | null} theme */
function applyTheme(theme) {
  const chosen = theme === 'light' || theme === 'dark' ? theme : null;
  const dark = chosen ? chosen === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  $('theme-toggle').setAttribute('aria-pressed', String(dark));
  desktopBridge()
    ?.setTheme?.(chosen ?? 'system')
    .catch(() => undefined);
}

function toggleTheme() {
  const dark = $('theme-toggle').getAttribute('aria-pressed') === 'true';
  const theme = dark ? 'light' : 'dark';
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // storage may be off; the toggle still works for this page
  }
  applyTheme(theme);
}

function storedTheme() {
  try {
    return localStorage.getItem(THEME_KEY);
  } catch {
    return null;
  }
}

/** Applies the stored theme, follows the system's, and wires the toggle. */
export function startTheme() {
  applyTheme(storedTheme());
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => applyTheme(storedTheme()));
  $('theme-toggle').addEventListener('click', toggleTheme);
}
