/** A printer on a two-way line (serial or raw TCP): sending is writing the bytes. */
import type { ByteLink, PrinterTransport, SendReceipt } from './types.js';

export class LineTransport implements PrinterTransport {
  constructor(
    readonly kind: 'serial' | 'tcp',
    readonly link: ByteLink,
  ) {}

  get target(): string {
    return this.link.target;
  }

  async send(data: Buffer): Promise<SendReceipt> {
    await this.link.write(data);
    return { reference: this.link.target, bytes: data.length };
  }

  close(): Promise<void> {
    return this.link.close();
  }
}
