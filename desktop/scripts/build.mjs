/**
 * Builds the desktop app into `dist/`: `main.cjs` and `preload.cjs` bundled with esbuild (our TypeScript,
 * `@dpp/agent` and `@dpp/shared` inlined; `electron` and every npm package left to `require` at run time,
 * so native modules and packages that read files beside themselves keep working), and a copy of the
 * agent's console page in `dist/console-ui`.
 *
 *   node scripts/build.mjs [--outdir DIR]
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

export const DESKTOP_DIR = fileURLToPath(new URL('..', import.meta.url));
export const DIST_DIR = path.join(DESKTOP_DIR, 'dist');
export const CONSOLE_UI_DIR = path.resolve(DESKTOP_DIR, '../agent/src/console/ui');

/**
 * Bare imports stay `require`s, except our workspace packages (TypeScript sources) and packages that
 * cannot be required (ESM only, e.g. canonicalize 4): those are bundled, since main.cjs is CommonJS.
 */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point' || args.path.startsWith('@dpp/')) return undefined;
      if (args.path === 'electron') return { path: args.path, external: true };
      try {
        createRequire(path.join(args.resolveDir, 'index.js')).resolve(args.path);
        return { path: args.path, external: true };
      } catch {
        return undefined;
      }
    });
  },
};

export async function buildDesktop({ outdir = DIST_DIR } = {}) {
  await mkdir(outdir, { recursive: true });
  const common = {
    absWorkingDir: DESKTOP_DIR,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    // Electron 38 runs Node 22.
    target: 'node22',
    sourcemap: true,
    outdir,
    outExtension: { '.js': '.cjs' },
    logLevel: 'warning',
    // The agent finds its console page through import.meta.url when it runs as ESM; the desktop passes
    // the folder instead (see paths.ts), so an empty import.meta in CommonJS is expected.
    logOverride: { 'empty-import-meta': 'silent' },
  };
  const main = await build({
    ...common,
    entryPoints: { main: 'src/main.ts' },
    plugins: [externalPackages],
    metafile: true,
  });
  // A sandboxed preload can require nothing but `electron`: everything else is bundled into it.
  const preload = await build({
    ...common,
    entryPoints: { preload: 'src/preload.ts' },
    external: ['electron'],
    metafile: true,
  });
  const ui = path.join(outdir, 'console-ui');
  await rm(ui, { recursive: true, force: true });
  await cp(CONSOLE_UI_DIR, ui, { recursive: true });
  return { outdir, main: main.metafile, preload: preload.metafile };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
  const { outdir } = await buildDesktop(values.outdir ? { outdir: path.resolve(values.outdir) } : {});
  console.log(`desktop built in ${path.relative(process.cwd(), outdir) || '.'}`);
}
