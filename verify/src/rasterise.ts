/** Page 1 of a PDF as a PNG, by poppler's `pdftoppm` when it is on PATH; null when it is not. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function rasteriseWithPdftoppm(pdf: Buffer): Promise<Buffer | null> {
  const dir = await mkdtemp(join(tmpdir(), 'dpp-verify-'));
  try {
    const input = join(dir, 'label.pdf');
    await writeFile(input, pdf);
    try {
      await run('pdftoppm', [
        '-png',
        '-r',
        '300',
        '-f',
        '1',
        '-l',
        '1',
        '-singlefile',
        input,
        join(dir, 'page'),
      ]);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    return await readFile(join(dir, 'page.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
