/**
 * The IPC contract between the console page (through the preload) and the main process: the channel
 * names and what travels on them. Plain data only; no Electron, no validation library, so the sandboxed
 * preload can bundle it.
 */

/** The only channels the main process answers. */
export const IPC_CHANNELS = {
  /** () => DesktopInfo */
  info: 'dpp:info',
  /** (theme: ThemeSource) => ThemeSource: the window's frame and menus follow the page's theme. */
  setTheme: 'dpp:set-theme',
} as const;

export type IpcChannel = (typeof IPC_CHANNELS)[keyof typeof IPC_CHANNELS];

export const THEME_SOURCES = ['system', 'light', 'dark'] as const;
export type ThemeSource = (typeof THEME_SOURCES)[number];

export interface DesktopInfo {
  appVersion: string;
  electronVersion: string;
  agentVersion: string;
  platform: string;
}

/** What `window.dppDesktop` offers the console page. */
export interface DesktopBridge {
  info(): Promise<DesktopInfo>;
  setTheme(theme: ThemeSource): Promise<ThemeSource>;
}
