/**
 * A spool folder: each payload is written to a hidden temp file, fsynced, then renamed into place, so
 * whatever watches the folder never sees half a label. One-way.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PrinterTransport, SendReceipt } from './types.js';

export interface SpoolTransportOptions {
  dir: string;
  /** File extension, e.g. `zpl` or `pdf`. */
  extension: string;
}

export class SpoolTransport implements PrinterTransport {
  readonly kind = 'spool' as const;
  readonly link = null;

  constructor(private readonly options: SpoolTransportOptions) {}

  get target(): string {
    return this.options.dir;
  }

  async send(data: Buffer, name: string): Promise<SendReceipt> {
    await mkdir(this.options.dir, { recursive: true });
    const safe = name.replace(/[^A-Za-z0-9._-]/g, '_');
    const file = `${safe}.${this.options.extension}`;
    const tmp = path.join(this.options.dir, `.${safe}.${randomUUID()}.tmp`);
    const handle = await open(tmp, 'wx', 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(tmp, path.join(this.options.dir, file));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { reference: file, bytes: data.length };
  }

  async close(): Promise<void> {}
}
