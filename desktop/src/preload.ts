/**
 * The preload of the console window (sandboxed, context-isolated): exposes `window.dppDesktop` and
 * nothing else. It may `require` only `electron` (a sandboxed preload cannot load other modules); the
 * build bundles `bridge.ts` into it.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { createDesktopBridge } from './bridge.js';

contextBridge.exposeInMainWorld(
  'dppDesktop',
  createDesktopBridge((channel, ...args) => ipcRenderer.invoke(channel, ...args)),
);
