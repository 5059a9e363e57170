/**
 * `npm run desktop`: builds the app, makes sure the Electron binary is there (npm does not run Electron's
 * install script in this repository: `allowScripts` denies it, so it is run here, on demand), prepares the
 * native modules for Electron's ABI, and starts Electron on the desktop package. Arguments after `--` go
 * to the app, e.g. `npm run desktop -- --config ./floor/dpp-agent.json`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DESKTOP_DIR, DIST_DIR, buildDesktop } from './build.mjs';
import { prepareNativeModules } from './native.mjs';

const require = createRequire(import.meta.url);

/** Downloads the Electron binary (once) the way its own postinstall would, then returns its path. */
function electronBinary() {
  const dir = path.dirname(require.resolve('electron/package.json'));
  if (!existsSync(path.join(dir, 'path.txt'))) {
    console.log('desktop: fetching the Electron binary (once): node node_modules/electron/install.js');
    const r = spawnSync(process.execPath, [path.join(dir, 'install.js')], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('the Electron download failed; see above (proxy? ELECTRON_MIRROR?)');
  }
  return require('electron');
}

await buildDesktop();
const binary = electronBinary();
const { version } = JSON.parse(await readFile(require.resolve('electron/package.json'), 'utf8'));
await prepareNativeModules({ distDir: DIST_DIR, electronVersion: version });
const child = spawn(binary, [DESKTOP_DIR, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
