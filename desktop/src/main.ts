/**
 * The desktop app's main process, kept thin: it runs the device agent in this process with the user's
 * configuration, opens the agent's console page in a locked-down window, shows the printers' worst state
 * in the tray, and stops the agent gracefully on quit. Everything with logic in it lives in plain modules
 * with tests (`ipc.ts`, `security.ts`, `tray.ts`, `paths.ts`).
 */
import path from 'node:path';
import { BrowserWindow, Menu, Tray, app, dialog, ipcMain, nativeImage, nativeTheme, session } from 'electron';
import { AGENT_VERSION, loadConfig, startAgent, toAgentError, type Agent } from '@dpp/agent';
import { createIpcHandlers } from './ipc.js';
import { consoleUiDir, desktopConfigFile } from './paths.js';
import { consoleWebPreferences, isConsoleUrl, requestAllowed, withConsoleHeaders } from './security.js';
import { trayIconBitmap, trayView } from './tray.js';

const TITLE = 'DPP Print Floor';
const ICON_SIZE = 32;

let agent: Agent | null = null;
let win: BrowserWindow | null = null;
let tray: Tray | null = null;
let stopping = false;

async function start(): Promise<void> {
  const file = desktopConfigFile(process.argv, process.env, app.getPath('userData'));
  const { config } = loadConfig({ file });
  agent = await startAgent(
    // The window needs the console, whatever the file says about it.
    { ...config, console: { ...config.console, enabled: true } },
    {
      consoleUiDir: consoleUiDir({
        isPackaged: app.isPackaged,
        resourcesPath: process.resourcesPath,
        mainDir: __dirname,
      }),
    },
  );
  const url = agent.consoleUrl!;
  const origin = new URL(url).origin;
  harden(origin);
  for (const [channel, handle] of Object.entries(
    createIpcHandlers({
      consoleOrigin: origin,
      info: () => ({
        appVersion: app.getVersion(),
        electronVersion: process.versions.electron ?? '',
        agentVersion: AGENT_VERSION,
        platform: process.platform,
      }),
      setTheme: (theme) => {
        nativeTheme.themeSource = theme;
      },
    }),
  ))
    ipcMain.handle(channel, (event, ...args: unknown[]) => handle({ url: event.senderFrame?.url }, args));
  openWindow(url, origin);
  startTray();
}

/** The session of the console window: no permissions, no other origin, the CSP on every answer. */
function harden(origin: string): void {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.webRequest.onBeforeRequest((details, callback) =>
    callback({ cancel: !requestAllowed(details.url, origin) }),
  );
  ses.webRequest.onHeadersReceived({ urls: [`${origin}/*`] }, (details, callback) =>
    callback({ responseHeaders: withConsoleHeaders(details.responseHeaders) }),
  );
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    const stayHome = (event: Electron.Event, target: string) => {
      if (!isConsoleUrl(target, origin)) event.preventDefault();
    };
    contents.on('will-navigate', stayHome);
    contents.on('will-redirect', stayHome);
  });
}

function openWindow(url: string, origin: string): void {
  win = new BrowserWindow({
    title: TITLE,
    width: 1280,
    height: 900,
    minWidth: 720,
    minHeight: 560,
    show: false,
    autoHideMenuBar: true,
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#0f1216' : '#eef1f5',
    webPreferences: consoleWebPreferences(path.join(__dirname, 'preload.cjs')),
  });
  win.once('ready-to-show', () => win?.show());
  win.on('closed', () => (win = null));
  if (!isConsoleUrl(url, origin)) throw new Error(`not a console URL: ${url}`);
  void win.loadURL(url);
}

function showWindow(): void {
  if (!win) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}

function startTray(): void {
  const a = agent;
  if (!a) return;
  tray = new Tray(icon('ok'));
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: 'Open the console', click: showWindow },
      { type: 'separator' },
      { label: 'Quit', click: () => app.quit() },
    ]),
  );
  tray.on('click', showWindow);
  let pending: NodeJS.Timeout | null = null;
  const update = () => {
    pending = null;
    const status = a.status();
    const waiting = status.jobs.current.filter((j) => j.waitingFor === 'attestation').length;
    const view = trayView(status.printers, waiting);
    tray?.setImage(icon(view.level));
    tray?.setToolTip(view.tooltip);
    if (win && !win.isFocused()) win.flashFrame(waiting > 0);
  };
  // Printers report every few hundred milliseconds: redraw at most four times a second.
  const soon = () => (pending ??= setTimeout(update, 250));
  a.events.on('printer', soon);
  a.events.on('job', soon);
  update();
}

function icon(level: Parameters<typeof trayIconBitmap>[0]): Electron.NativeImage {
  return nativeImage.createFromBitmap(trayIconBitmap(level, ICON_SIZE), {
    width: ICON_SIZE,
    height: ICON_SIZE,
    scaleFactor: 2,
  });
}

function fail(err: unknown): void {
  const e = toAgentError(err);
  dialog.showErrorBox(
    TITLE,
    e.code === 'NOT_ENROLLED' || e.code === 'CONFIG_INVALID'
      ? `${e.message}\n\nSee desktop/README.md: enroll this device and write its configuration first.`
      : e.message,
  );
  app.exit(1);
}

if (!app.requestSingleInstanceLock()) {
  // One agent per data folder: a second window would be a second agent on the same database.
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', (event) => {
    if (!agent || stopping) return;
    // Jobs in progress report FAILED (agent_stopped) and the outbox gets its drain time before exit.
    event.preventDefault();
    stopping = true;
    tray?.destroy();
    agent
      .stop()
      .catch((err: unknown) => console.error('agent stop failed', err))
      .finally(() => {
        agent = null;
        app.quit();
      });
  });
  app.whenReady().then(start).catch(fail);
}
