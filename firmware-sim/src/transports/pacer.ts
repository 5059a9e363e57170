/**
 * Real baud-rate pacing: bytes pass at most at `baud / 10` bytes per second (start bit, 8 data
 * bits, stop bit), in slices of about 10 ms. The baud rate is read before every slice, so it can be
 * changed while a transfer is under way; `null` means unpaced.
 */
import { realClock, type Clock } from './clock.js';

export const BITS_PER_BYTE = 10;
const SLICE_MS = 10;

export class Pacer {
  private tail: Promise<void> = Promise.resolve();
  private nextAt = 0;
  private stopped = false;

  constructor(
    private readonly baudRate: () => number | null,
    private readonly sink: (chunk: Buffer) => void | Promise<void>,
    private readonly clock: Clock = realClock,
  ) {}

  /** Queues `data`; resolves when its last byte has been passed to the sink. */
  push(data: Buffer): Promise<void> {
    const run = this.tail.then(() => this.send(data));
    this.tail = run.catch(() => {});
    return run;
  }

  /** Drops whatever is still queued. */
  stop(): void {
    this.stopped = true;
  }

  private async send(data: Buffer): Promise<void> {
    let offset = 0;
    while (offset < data.length && !this.stopped) {
      const baud = this.baudRate();
      if (baud === null) {
        await this.sink(data.subarray(offset));
        return;
      }
      const bytesPerSlice = Math.max(1, Math.floor((baud / BITS_PER_BYTE) * (SLICE_MS / 1000)));
      const slice = data.subarray(offset, offset + bytesPerSlice);
      const now = this.clock.now();
      this.nextAt = Math.max(now, this.nextAt) + (slice.length * BITS_PER_BYTE * 1000) / baud;
      await this.clock.sleep(this.nextAt - now);
      if (this.stopped) return;
      await this.sink(slice);
      offset += slice.length;
    }
  }
}
