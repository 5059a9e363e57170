/**
 * A printer through Linux's `usblp` character device (`/dev/usb/lpN`), both ways: a write goes to the printer's
 * bulk OUT endpoint, a read returns what it sent on bulk IN (a bidirectional interface, USB printer class
 * protocol 2, which Zebra's are). usblp allows one open at a time.
 *
 * Node has no readiness events for a character device that is not a tty, so the node is opened O_NONBLOCK
 * and read by polling: every few milliseconds after a write or an answer, backing off to `idlePollMs` while
 * the printer is quiet. A read never blocks a thread of libuv's pool, and close() never waits on one.
 *
 * An unplug shows as ENODEV (EIO on a pty standing in for the node, whose hang-up also reads as end of
 * file); the channel then closes and reports the drop, and the link finds the printer again by serial number.
 */
import { constants, type FileHandle, open } from 'node:fs/promises';
import { isatty } from 'node:tty';
import { AgentError } from '../errors.js';
import { USB_WRITE_STALL_MS, type UsbChannel, type UsbChannelHandlers } from './usb-channel.js';

export interface UsblpChannelOptions {
  /** Fastest poll, right after a write or an answer. */
  busyPollMs?: number;
  /** Slowest poll, once the printer has been quiet a while. */
  idlePollMs?: number;
  writeStallMs?: number;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

export class UsblpChannel implements UsbChannel {
  private closed = false;
  private pollMs: number;
  private wake: (() => void) | null = null;
  private writes: Promise<unknown> = Promise.resolve();
  private readonly reading: Promise<void>;
  private readonly busyPollMs: number;
  private readonly idlePollMs: number;

  private constructor(
    readonly device: string,
    private readonly handle: FileHandle,
    private readonly handlers: UsbChannelHandlers,
    private readonly options: UsblpChannelOptions,
    first: Buffer | null,
  ) {
    this.busyPollMs = options.busyPollMs ?? 5;
    this.idlePollMs = options.idlePollMs ?? 50;
    this.pollMs = this.busyPollMs;
    this.reading = this.readLoop(first);
  }

  static async open(
    device: string,
    handlers: UsbChannelHandlers,
    options: UsblpChannelOptions = {},
  ): Promise<UsblpChannel> {
    let handle: FileHandle;
    try {
      handle = await open(device, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (err) {
      const hint =
        errno(err) === 'EBUSY' ? ' (usblp allows one open: is CUPS or another program holding it?)' : '';
      throw new AgentError('TRANSPORT_ERROR', `cannot open ${device}: ${(err as Error).message}${hint}`, {
        cause: err,
      });
    }
    // usblp refuses reads (EINVAL) when the printer's interface is one-way (USB printer class protocol 1): it
    // picks the bidirectional alternate setting whenever the printer has one, so no other backend would do better.
    let first: Buffer | null = null;
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead > 0) first = buf.subarray(0, bytesRead);
    } catch (err) {
      if (errno(err) !== 'EAGAIN') {
        await handle.close().catch(() => undefined);
        const why =
          errno(err) === 'EINVAL'
            ? 'usblp drives this printer one way (its interface has no bulk IN), so it cannot report status'
            : `cannot read: ${(err as Error).message}`;
        throw new AgentError('TRANSPORT_ERROR', `${device}: ${why}`, { cause: err });
      }
    }
    return new UsblpChannel(device, handle, handlers, options, first);
  }

  private async nap(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.pollMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  private hurry(): void {
    this.pollMs = this.busyPollMs;
    this.wake?.();
  }

  /** `first`: what the probe at open read, handed on before anything read later. */
  private async readLoop(first: Buffer | null): Promise<void> {
    await Promise.resolve(); // the constructor returns first
    if (first && !this.closed) this.handlers.onData(first);
    const buf = Buffer.alloc(4096);
    // A pty standing in for the node reads 0 once its other end hung up; usblp reads 0 for a zero-length
    // packet from the printer and reports an unplug as ENODEV.
    const eofIsHangUp = isatty(this.handle.fd);
    while (!this.closed) {
      let n: number;
      try {
        n = (await this.handle.read(buf, 0, buf.length, null)).bytesRead;
      } catch (err) {
        if (this.closed) return;
        if (errno(err) !== 'EAGAIN') return this.drop(err as Error);
        n = -1;
      }
      if (this.closed) return;
      if (n > 0) {
        this.handlers.onData(Buffer.from(buf.subarray(0, n)));
        this.pollMs = this.busyPollMs;
        continue;
      }
      if (n === 0 && eofIsHangUp) return this.drop(new Error(`${this.device} hung up`));
      await this.nap();
      this.pollMs = Math.min(this.pollMs * 2, this.idlePollMs);
    }
  }

  private drop(reason: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    void this.handle.close().catch(() => undefined);
    this.handlers.onDrop(reason);
  }

  write(data: Buffer): Promise<void> {
    const run = this.writes.then(() => this.writeAll(data));
    this.writes = run.catch(() => undefined);
    return run;
  }

  private async writeAll(data: Buffer): Promise<void> {
    let offset = 0;
    let lastProgress = Date.now();
    const stallMs = this.options.writeStallMs ?? USB_WRITE_STALL_MS;
    while (offset < data.length) {
      if (this.closed) throw new AgentError('TRANSPORT_CLOSED', `${this.device} closed while writing`);
      let written = 0;
      try {
        written = (await this.handle.write(data, offset, data.length - offset, null)).bytesWritten;
      } catch (err) {
        if (errno(err) !== 'EAGAIN') {
          this.drop(err as Error);
          throw new AgentError('TRANSPORT_CLOSED', `write to ${this.device}: ${(err as Error).message}`, {
            cause: err,
          });
        }
      }
      offset += written;
      if (written > 0) lastProgress = Date.now();
      else if (Date.now() - lastProgress > stallMs)
        throw new AgentError(
          'TRANSPORT_ERROR',
          `${this.device} took no byte for ${stallMs} ms (${offset} of ${data.length} written)`,
        );
      // usblp has one URB in flight: a non-blocking write while it is busy answers EAGAIN
      else await new Promise((r) => setTimeout(r, 2));
    }
    // The last chunk may still be on its way to the printer (a non-blocking write submits it and returns): the
    // printer's status and ^HV answers, never this write, say when a label is out.
    this.hurry();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    await this.reading;
    await this.writes;
    await this.handle.close().catch(() => undefined);
  }
}
