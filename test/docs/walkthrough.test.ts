/**
 * The API walkthrough (docs/api-walkthrough.md, then its part 2, api-walkthrough-print.md) runs as written.
 * Their ```sh blocks, in order, run in one bash
 * against `npm start`'s own entry point (demo workspace, SQLite, no simulated floor), in a fresh folder, with
 * only the key and the URL taken from what the control plane printed instead of the placeholders a reader
 * replaces. `set -eu`: a command that fails, a helper that cannot parse an answer, or a variable never set
 * stops the run and fails the test.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@dpp/testkit';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** The runnable snippets of a page: its ```sh blocks, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

describe('the API walkthrough', () => {
  let dir: string;
  let child: ChildProcess;
  let output = '';
  let base: string;
  let key: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-walkthrough-'));
    // The reader runs the snippets in the repository: npx and node find the project's packages from there.
    await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'control-plane/src/dev.ts')], {
      cwd: dir,
      env: {
        ...process.env,
        PORT: String(port),
        PUBLIC_BASE_URL: base,
        MQTT_PORT: String(await freePort()),
        DATA_DIR: path.join(dir, 'data'),
        DPP_DEMO_FLOOR: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 60_000;
    while (!/Demo API key \(all scopes\): (\S+)/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`npm start did not come up:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    key = /Demo API key \(all scopes\): (\S+)/.exec(output)![1]!;
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs every shell snippet of the API walkthrough, in order, against npm start', async () => {
    const pages = ['docs/api-walkthrough.md', 'docs/api-walkthrough-print.md'];
    const blocks = (await Promise.all(pages.map((p) => readFile(path.join(repo, p), 'utf8')))).flatMap(
      shellBlocks,
    );
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    // The two placeholders the reader fills in from what npm start printed.
    const first = blocks[0]!.split('\n');
    expect(first.filter((l) => /^(KEY|BASE)=/.test(l))).toHaveLength(2);
    blocks[0] = first.filter((l) => !/^(KEY|BASE)=/.test(l)).join('\n');
    const script = ['set -eu', ...blocks.map((b, i) => `echo "### snippet ${i + 1}"\n${b}`)].join('\n');

    const run = spawnSync('bash', ['-c', script], {
      cwd: dir,
      env: { ...process.env, KEY: key, BASE: base },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const said = `${run.stdout}\n${run.stderr}`;
    if (process.env.WALKTHROUGH_SHOW) console.log(said);
    expect(run.status, said).toBe(0);
    // A missing command inside $(...) does not stop bash; it leaves an empty value (an empty Idempotency-Key).
    expect(said).not.toMatch(/command not found|No such file/);
    expect(said).toContain(`### snippet ${blocks.length}`);
    // The answers each step exists to show.
    expect(said).toMatch(/idempotent-replayed: true/i);
    expect(said).toMatch(/^name,description,category,gtin,serialNumber/m);
    expect(said).toMatch(/^import \S+: completed$/m);
    expect(said).toMatch(/^\{"data":\[\],"hasMore":false/m); // the import's rows all went in
    expect(said).toMatch(/^location: \/p\/\S+\?src=qr/im);
    expect(said).toContain('"bizStep":"commissioning"');
  }, 150_000);
});
