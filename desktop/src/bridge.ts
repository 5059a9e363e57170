/**
 * `window.dppDesktop`: the whole of what the console page gets from the desktop app. Each method sends one
 * fixed channel with only the arguments it names, so the page can never reach another channel or
 * `ipcRenderer` itself. Independent of Electron (the preload hands in `ipcRenderer.invoke`) for tests.
 */
import { IPC_CHANNELS, type DesktopBridge, type DesktopInfo, type ThemeSource } from './ipc-contract.js';

export type Invoke = (channel: string, ...args: unknown[]) => Promise<unknown>;

export function createDesktopBridge(invoke: Invoke): DesktopBridge {
  return Object.freeze({
    info: () => invoke(IPC_CHANNELS.info) as Promise<DesktopInfo>,
    setTheme: (theme: ThemeSource) => invoke(IPC_CHANNELS.setTheme, theme) as Promise<ThemeSource>,
  });
}
