/**
 * The built app (scripts/build.mjs) and its packaging config, without Electron: the preload bundle runs
 * under a sandbox's `require` (only `electron`) and exposes the bridge; the main bundle inlines our
 * workspace code and leaves packages that resolve from the desktop folder; electron-builder accepts the
 * config.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPC_CHANNELS } from './ipc-contract.js';

const DESKTOP_DIR = fileURLToPath(new URL('..', import.meta.url));
const CONSOLE_UI_DIR = path.resolve(DESKTOP_DIR, '../agent/src/console/ui');
const run = promisify(execFile);

function requiresOf(code: string): string[] {
  return [...new Set([...code.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!))].sort();
}

describe('the desktop build', () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(path.join(os.tmpdir(), 'dpp-desktop-build-'));
    await run(process.execPath, [path.join(DESKTOP_DIR, 'scripts/build.mjs'), '--outdir', out], {
      timeout: 60_000,
    });
  }, 90_000);
  afterAll(() => rm(out, { recursive: true, force: true }));

  it('makes a preload that needs only electron and exposes window.dppDesktop, routed to its channels', async () => {
    const code = await readFile(path.join(out, 'preload.cjs'), 'utf8');
    expect(requiresOf(code)).toEqual(['electron']);
    const exposed = new Map<string, Record<string, (...a: unknown[]) => Promise<unknown>>>();
    const invoked: unknown[][] = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (key: string, api: never) => exposed.set(key, api) },
      ipcRenderer: {
        invoke: async (...args: unknown[]) => {
          invoked.push(args);
          return 'ok';
        },
      },
    };
    // What a sandboxed preload gets: a require that knows electron and refuses the rest.
    const sandboxRequire = (name: string) => {
      if (name === 'electron') return electron;
      throw new Error(`module not found: ${name}`);
    };
    const module = { exports: {} };
    vm.runInNewContext(code, { require: sandboxRequire, module, exports: module.exports });
    expect([...exposed.keys()]).toEqual(['dppDesktop']);
    const bridge = exposed.get('dppDesktop')!;
    expect(Object.keys(bridge).sort()).toEqual(['info', 'setTheme']);
    await bridge.info!();
    await bridge.setTheme!('dark', 'ignored');
    expect(invoked).toEqual([[IPC_CHANNELS.info], [IPC_CHANNELS.setTheme, 'dark']]);
  });

  it('makes a main that inlines the workspace code and requires packages found from the desktop folder', async () => {
    const code = await readFile(path.join(out, 'main.cjs'), 'utf8');
    const required = requiresOf(code);
    expect(required).toContain('electron');
    expect(required.filter((r) => r.startsWith('@dpp/'))).toEqual([]);
    expect(required).toEqual(expect.arrayContaining(['better-sqlite3', 'serialport', 'pino']));
    const fromDist = createRequire(path.join(DESKTOP_DIR, 'dist', 'main.cjs'));
    const builtins = new Set(builtinModules);
    for (const name of required.filter((r) => !r.startsWith('node:') && !builtins.has(r)))
      expect(() => fromDist.resolve(name), name).not.toThrow();
    expect(code).toContain(IPC_CHANNELS.setTheme);
    expect(code).toContain('contextIsolation: true');
    expect(code).toContain('sandbox: true');
  });

  it('copies the console page beside main.cjs', () => {
    const files = readdirSync(CONSOLE_UI_DIR);
    expect(files).toEqual(expect.arrayContaining(['index.html', 'app.js', 'app.css', 'icon.svg']));
    for (const file of files) expect(existsSync(path.join(out, 'console-ui', file)), file).toBe(true);
  });
});

describe('the packaging config', () => {
  it('is valid for electron-builder and makes Linux and Windows installers of the built files', async () => {
    const require = createRequire(import.meta.url);
    const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
      getConfig(dir: string, file: string, options: null): Promise<Record<string, never>>;
      validateConfiguration(config: unknown, logger: unknown): Promise<void>;
    };
    const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
    const config = await getConfig(DESKTOP_DIR, 'electron-builder.yml', null);
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    expect(config).toMatchObject({
      appId: 'eu.dpp.printfloor.desktop',
      productName: 'DPP Print Floor',
      linux: { target: ['AppImage', 'deb'] },
      win: { target: ['nsis'] },
      extraResources: [{ from: 'dist/console-ui', to: 'console-ui' }],
    });
    expect(JSON.stringify(config.files)).toContain('dist/main.cjs');
    expect(JSON.stringify(config.files)).toContain('dist/preload.cjs');
    const pkg = JSON.parse(await readFile(path.join(DESKTOP_DIR, 'package.json'), 'utf8'));
    expect(pkg.main).toBe('dist/main.cjs');
    expect(pkg.productName).toBe('DPP Print Floor');
  });
});
