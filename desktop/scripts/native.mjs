/**
 * Native modules for Electron's ABI, for `npm run desktop` from the repository. Electron 38 runs its own
 * Node (22) with another ABI than the Node 20 the tests use, so `better-sqlite3` (V8 API, one build per
 * ABI) needs a build of its own. Rebuilding it in place would break the Node side; instead a copy goes to
 * `dist/node_modules/better-sqlite3`, which `dist/main.cjs` finds first, and @electron/rebuild fetches the
 * prebuilt binary for this Electron (or compiles it). `serialport`'s binding is N-API: it needs nothing.
 * Installers do not use this: electron-builder rebuilds native modules for the packaged app.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const MODULE = 'better-sqlite3';

export async function prepareNativeModules({ distDir, electronVersion, log = console.log }) {
  const source = path.dirname(require.resolve(`${MODULE}/package.json`));
  const { version } = JSON.parse(await readFile(path.join(source, 'package.json'), 'utf8'));
  const modules = path.join(distDir, 'node_modules');
  const target = path.join(modules, MODULE);
  const stamp = path.join(modules, `.${MODULE}.electron`);
  const wanted = `${MODULE}@${version} electron@${electronVersion} ${process.platform}-${process.arch}`;
  if (existsSync(stamp) && (await readFile(stamp, 'utf8')) === wanted) return target;

  log(`desktop: building ${MODULE} ${version} for Electron ${electronVersion} (once)`);
  await rm(target, { recursive: true, force: true });
  await mkdir(modules, { recursive: true });
  // Everything but the Node build: the sources and the prebuild metadata the rebuild needs.
  await cp(source, target, {
    recursive: true,
    filter: (p) => !p.startsWith(path.join(source, 'build') + path.sep) && p !== path.join(source, 'build'),
  });
  // @electron/rebuild walks the dependencies of the package.json in its build path.
  const manifest = path.join(distDir, 'package.json');
  await writeFile(
    manifest,
    JSON.stringify({ name: 'dpp-desktop-native', private: true, dependencies: { [MODULE]: version } }),
  );
  try {
    const { rebuild } = await import('@electron/rebuild');
    await rebuild({
      buildPath: distDir,
      projectRootPath: distDir,
      electronVersion,
      onlyModules: [MODULE],
      force: true,
    });
  } finally {
    await rm(manifest, { force: true });
  }
  if (!existsSync(path.join(target, 'build', 'Release', 'better_sqlite3.node')))
    throw new Error(`${MODULE} was not built for Electron ${electronVersion}`);
  await writeFile(stamp, wanted);
  return target;
}
