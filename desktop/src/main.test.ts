/**
 * The built main process (dist/main.cjs) in Node, with a stand-in for the `electron` module (the Electron
 * binary cannot run here): it starts a real agent from the user's config, serves the console page from
 * the bundled copy, opens a locked-down window on it, answers IPC from the console page only, keeps the
 * window on the console origin, shows the printers in the tray, and stops the agent on quit.
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import Module, { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, generateDeviceKey, keyFilePath, writeIdentity, writeKeyFile } from '@dpp/agent';
import { IPC_CHANNELS } from './ipc-contract.js';

const DESKTOP_DIR = fileURLToPath(new URL('..', import.meta.url));
const fromDesktop = createRequire(path.join(DESKTOP_DIR, 'package.json'));

type Handler = (...args: never[]) => unknown;

/** Just enough of Electron's main-process API, recording what main.cjs does with it. */
function fakeElectron(userData: string) {
  const handlers = new Map<string, Handler>();
  const windows: FakeWindow[] = [];
  const trays: FakeTray[] = [];
  const errors: string[] = [];
  const session = {
    permissionRequest: null as Handler | null,
    beforeRequest: null as Handler | null,
    headersFilter: null as unknown,
    headersReceived: null as Handler | null,
  };
  class FakeApp extends EventEmitter {
    isPackaged = false;
    exitCode: number | null = null;
    quitted = false;
    requestSingleInstanceLock = () => true;
    whenReady = () => Promise.resolve();
    getPath = () => userData;
    getVersion = () => '0.1.0';
    exit = (code: number) => (this.exitCode = code);
    quit = () => {
      let prevented = false;
      this.emit('before-quit', { preventDefault: () => (prevented = true) });
      if (!prevented) this.quitted = true;
    };
  }
  class FakeWindow extends EventEmitter {
    url: string | null = null;
    flashing = false;
    constructor(readonly options: Record<string, unknown>) {
      super();
      windows.push(this);
    }
    loadURL = async (url: string) => void (this.url = url);
    show = () => undefined;
    focus = () => undefined;
    restore = () => undefined;
    isMinimized = () => false;
    isFocused = () => false;
    flashFrame = (on: boolean) => void (this.flashing = on);
  }
  class FakeTray extends EventEmitter {
    image: unknown = null;
    tooltip = '';
    menu: unknown = null;
    destroyed = false;
    constructor(image: unknown) {
      super();
      this.image = image;
      trays.push(this);
    }
    setImage = (image: unknown) => void (this.image = image);
    setToolTip = (tooltip: string) => void (this.tooltip = tooltip);
    setContextMenu = (menu: unknown) => void (this.menu = menu);
    destroy = () => void (this.destroyed = true);
  }
  const app = new FakeApp();
  const nativeTheme = { shouldUseDarkColors: false, themeSource: 'system' };
  const electron = {
    app,
    BrowserWindow: FakeWindow,
    Tray: FakeTray,
    Menu: { buildFromTemplate: (template: unknown) => ({ template }) },
    dialog: { showErrorBox: (_title: string, message: string) => errors.push(message) },
    ipcMain: { handle: (channel: string, fn: Handler) => handlers.set(channel, fn) },
    nativeImage: { createFromBitmap: (bitmap: Buffer, options: unknown) => ({ bitmap, options }) },
    nativeTheme,
    session: {
      defaultSession: {
        setPermissionRequestHandler: (fn: Handler) => (session.permissionRequest = fn),
        setPermissionCheckHandler: () => undefined,
        webRequest: {
          onBeforeRequest: (fn: Handler) => (session.beforeRequest = fn),
          onHeadersReceived: (filter: unknown, fn: Handler) => {
            session.headersFilter = filter;
            session.headersReceived = fn;
          },
        },
      },
    },
  };
  return { electron, app, handlers, windows, trays, errors, session, nativeTheme };
}

/**
 * Loads the bundle as Electron would, with `electron` replaced by the stand-in and its packages resolved
 * from the desktop folder (where the installed app has them).
 */
function loadMain(bundle: string, electron: unknown, argv: string[]): () => void {
  const mod = Module as unknown as {
    _load: (request: string, parent: { filename?: string } | null, isMain: boolean) => unknown;
    _resolveFilename: (request: string, parent: { filename?: string } | null, ...rest: unknown[]) => string;
  };
  const load = mod._load;
  const resolve = mod._resolveFilename;
  const dir = path.dirname(bundle);
  mod._load = function (request, parent, isMain) {
    if (request === 'electron' && parent?.filename?.startsWith(dir)) return electron;
    return load.call(this, request, parent, isMain);
  };
  mod._resolveFilename = function (request, parent, ...rest) {
    if (parent?.filename?.startsWith(dir) && /^[^./]/.test(request) && !request.startsWith('node:'))
      return fromDesktop.resolve(request);
    return resolve.call(this, request, parent, ...rest);
  };
  // main.cjs reads its --config when the app is ready: the command line stays until `restore`.
  const savedArgv = process.argv;
  process.argv = [process.execPath, DESKTOP_DIR, ...argv];
  delete createRequire(bundle).cache[bundle];
  createRequire(bundle)(bundle);
  return () => {
    mod._load = load;
    mod._resolveFilename = resolve;
    process.argv = savedArgv;
  };
}

async function waitFor<T>(what: string, fn: () => T | undefined | null, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the desktop main process (built, with a stand-in for electron)', () => {
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-desktop-main-'));
    const out = path.join(dir, 'app');
    await promisify(execFile)(
      process.execPath,
      [path.join(DESKTOP_DIR, 'scripts/build.mjs'), '--outdir', out],
      {
        timeout: 60_000,
      },
    );
    bundle = path.join(out, 'main.cjs');
    // An enrolled device (as `dpp-agent enroll` leaves it), whose control plane is not running: the agent
    // starts anyway and queues what it would send.
    const dataDir = path.join(dir, 'data');
    const { key, privateJwk } = await generateDeviceKey();
    await writeIdentity(dataDir, {
      deviceId: randomUUID(),
      tenantId: randomUUID(),
      name: 'line-7',
      site: null,
      printerNames: [],
      controlPlaneUrl: 'http://127.0.0.1:9',
      issuer: 'http://127.0.0.1:9',
      tokenEndpoint: 'http://127.0.0.1:9/oauth/token',
      jwksUri: 'http://127.0.0.1:9/.well-known/jwks.json',
      mqtt: { url: null, topicPrefix: 'dpp' },
      keyThumbprint: key.kid,
      enrolledAt: new Date().toISOString(),
    });
    await writeKeyFile(keyFilePath(dataDir), privateJwk);
    await writeFile(
      path.join(dir, 'dpp-agent.json'),
      JSON.stringify({
        dataDir: './data',
        mqttEnabled: false,
        logLevel: 'silent',
        console: { port: 0, enabled: false },
        printers: [],
      }),
    );
  }, 90_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('runs the agent and its console in a locked-down window, answers the console page only, stops on quit', async () => {
    const f = fakeElectron(path.join(dir, 'user-data'));
    const restore = loadMain(bundle, f.electron, ['--config', path.join(dir, 'dpp-agent.json')]);
    try {
      const win = await waitFor('the window', () => (f.windows[0]?.url ? f.windows[0] : undefined));
      expect(f.errors).toEqual([]);
      const url = win.url!;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/); // the console, on although the file turned it off
      const origin = new URL(url).origin;
      expect(win.options.webPreferences).toMatchObject({
        preload: path.join(path.dirname(bundle), 'preload.cjs'),
        contextIsolation: true,
        nodeIntegration: false,
        sandbox: true,
      });

      // The page is the bundled copy, served by the agent with its CSP.
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(await page.text()).toContain('Print floor console');

      // IPC: both channels, for the console page only.
      expect([...f.handlers.keys()].sort()).toEqual(Object.values(IPC_CHANNELS).sort());
      const invoke = (channel: string, from: string, ...args: unknown[]) =>
        Promise.resolve().then(() =>
          (f.handlers.get(channel) as (...a: unknown[]) => unknown)({ senderFrame: { url: from } }, ...args),
        );
      expect(await invoke(IPC_CHANNELS.info, `${url}/#/`)).toMatchObject({
        appVersion: '0.1.0',
        agentVersion: '0.1.0',
      });
      expect(await invoke(IPC_CHANNELS.setTheme, `${url}/`, 'dark')).toBe('dark');
      expect(f.nativeTheme.themeSource).toBe('dark');
      await expect(invoke(IPC_CHANNELS.setTheme, 'https://evil.example/', 'light')).rejects.toMatchObject({
        code: 'FORBIDDEN_SENDER',
      });
      await expect(invoke(IPC_CHANNELS.setTheme, `${url}/`, 'neon')).rejects.toMatchObject({
        code: 'INVALID_ARGUMENTS',
      });
      expect(f.nativeTheme.themeSource).toBe('dark');

      // Navigation, new windows, webviews, permissions, other origins: refused. The CSP is added.
      const contents = Object.assign(new EventEmitter(), {
        openHandler: null as (() => unknown) | null,
        setWindowOpenHandler(fn: () => unknown) {
          this.openHandler = fn;
        },
      });
      f.app.emit('web-contents-created', {}, contents);
      const prevented = (event: string, target?: string) => {
        let p = false;
        contents.emit(event, { preventDefault: () => (p = true) }, target);
        return p;
      };
      expect(prevented('will-navigate', 'https://evil.example/')).toBe(true);
      expect(prevented('will-redirect', 'file:///etc/passwd')).toBe(true);
      expect(prevented('will-navigate', `${url}/#/jobs/job_1`)).toBe(false);
      expect(prevented('will-attach-webview')).toBe(true);
      expect(contents.openHandler?.()).toEqual({ action: 'deny' });
      let granted: boolean | null = null;
      f.session.permissionRequest!({} as never, 'media' as never, ((ok: boolean) => (granted = ok)) as never);
      expect(granted).toBe(false);
      const cancel = (u: string) => {
        let c: unknown;
        f.session.beforeRequest!({ url: u } as never, ((r: { cancel: boolean }) => (c = r.cancel)) as never);
        return c;
      };
      expect(cancel('https://cdn.example/x.js')).toBe(true);
      expect(cancel(`${url}/ui/app.js`)).toBe(false);
      expect(f.session.headersFilter).toEqual({ urls: [`${origin}/*`] });
      let headers: Record<string, string[]> = {};
      f.session.headersReceived!(
        { responseHeaders: {} } as never,
        ((r: { responseHeaders: Record<string, string[]> }) => (headers = r.responseHeaders)) as never,
      );
      expect(headers['Content-Security-Policy']).toEqual([CONSOLE_CSP]);

      // The tray shows the printers (none here) with a 32 x 32 dot.
      const tray = await waitFor('the tray', () => f.trays[0]);
      expect(tray.tooltip).toBe('DPP print floor - no printers configured');
      expect(tray.image).toMatchObject({ options: { width: 32, height: 32 } });

      // Quit: the agent stops first (the console goes away), then the app quits.
      f.app.quit();
      expect(f.app.quitted).toBe(false);
      await waitFor('the quit', () => f.app.quitted);
      expect(tray.destroyed).toBe(true);
      await expect(fetch(`${url}/api/status`)).rejects.toThrow();
    } finally {
      if (!f.app.quitted) {
        f.app.quit(); // a failed assertion above must not leave the agent running
        await waitFor('the quit', () => f.app.quitted).catch(() => undefined);
      }
      restore();
    }
  }, 30_000);

  it('says what is wrong and exits when the configuration is missing', async () => {
    const f = fakeElectron(path.join(dir, 'user-data'));
    const restore = loadMain(bundle, f.electron, ['--config', path.join(dir, 'missing.json')]);
    try {
      await waitFor('the exit', () => f.app.exitCode !== null);
      expect(f.app.exitCode).toBe(1);
      expect(f.errors).toHaveLength(1);
      expect(f.errors[0]).toMatch(/missing\.json: no such config file[\s\S]*desktop\/README\.md/);
      expect(f.windows).toEqual([]);
    } finally {
      restore();
    }
  });
});
