/** Keeps every printed label as `label-0001.png` (and the ZPL it was rendered from) in one folder. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class LabelStore {
  private constructor(
    readonly dir: string,
    private readonly removeOnClose: boolean,
  ) {}

  /** A store in `dir` (created if missing, kept) or in a fresh temp folder (removed on close unless `keep`). */
  static async open(dir: string | undefined, keep = false): Promise<LabelStore> {
    if (dir) {
      await mkdir(dir, { recursive: true });
      return new LabelStore(dir, false);
    }
    return new LabelStore(await mkdtemp(join(tmpdir(), 'dpp-sim-labels-')), !keep);
  }

  async save(index: number, png: Buffer, zpl: string): Promise<string> {
    const base = join(this.dir, `label-${String(index).padStart(4, '0')}`);
    await Promise.all([writeFile(`${base}.png`, png), writeFile(`${base}.zpl`, zpl)]);
    return `${base}.png`;
  }

  async close(): Promise<void> {
    if (this.removeOnClose) await rm(this.dir, { recursive: true, force: true });
  }
}
