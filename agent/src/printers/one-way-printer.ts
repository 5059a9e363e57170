/**
 * A printer that only takes bytes: a PDF office printer, or any printer behind CUPS or a spool folder. It
 * cannot say whether the paper came out, so its labels are attested by a person.
 */
import type { PrinterTransport, SendReceipt } from '../transports/index.js';
import type { Completion, PrinterDriver } from './types.js';

export class OneWayPrinter implements PrinterDriver {
  readonly twoWay = false;

  constructor(
    readonly name: string,
    readonly language: 'zpl' | 'pdf',
    readonly transport: PrinterTransport,
  ) {}

  async status(): Promise<null> {
    return null;
  }

  send(payload: Buffer, name: string): Promise<SendReceipt> {
    return this.transport.send(payload, name);
  }

  async awaitCompletion(): Promise<Completion> {
    return { evidence: 'none' };
  }

  async cancelHeld(): Promise<void> {}

  /** A one-way line cannot tell what the printer holds. */
  cancelUnstarted(): Promise<number | null> {
    return Promise.resolve(null);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
