import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the checkpointer', () => {
  // The worker is unreferenced while it runs, so it never keeps a process alive by itself; a stop that waited
  // for it unreferenced let a process with nothing else to do exit before the store was closed (the bench of
  // 1.5M rows exited with code 0 and printed nothing while the last connection's close checkpointed its WAL).
  it('keeps a process that has nothing else to do alive until its stop is done', () => {
    const module = pathToFileURL(path.join(here, 'checkpointer.ts')).href;
    const script = `
      const { startCheckpointer } = await import(${JSON.stringify(module)});
      const checkpointer = startCheckpointer(${JSON.stringify(path.join(dir, 'db.sqlite'))}, 10, () => {});
      await checkpointer.stop();
      console.log('stopped');
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('stopped');
    expect(run.status).toBe(0);
  });
});
