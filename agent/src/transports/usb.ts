/**
 * A USB label printer, both ways, named by its USB serial number (iSerialNumber), never by a device path:
 * `/dev/usb/lp0` today may be `lp1` after a re-plug. Each open finds the printer again: first among Linux's
 * usblp devices in sysfs, then (or only, as configured) through libusb. Bytes the printer sends back (`~HS`,
 * `~HQES`, `^HV` answers) arrive as `data`, as on a serial line, so the ZPL driver gates every print on the
 * printer's status and reads RFID tags back exactly as over serial and raw TCP. CUPS, by contrast, drives
 * USB printers one way and reports a job done while the printer blinks red with no paper.
 */
import { AgentError } from '../errors.js';
import { TypedEvents } from '@dpp/shared';
import {
  LibusbChannel,
  loadNodeUsb,
  type LibusbChannelOptions,
  type UsbBinding,
  type UsbBindingLoader,
} from './libusb.js';
import type { UsbChannel } from './usb-channel.js';
import { findUsblpPrinter, type UsbPrinterMatch, type UsbRoots } from './usb-sysfs.js';
import { UsblpChannel, type UsblpChannelOptions } from './usblp.js';
import type { ByteLink, LinkEvents, PrinterTransport, SendReceipt } from './types.js';

export type UsbBackend = 'auto' | 'usblp' | 'libusb';

export interface UsbLinkOptions extends UsbPrinterMatch, UsbRoots {
  /** `auto`: usblp when the printer is there, else libusb; `usblp` or `libusb`: only that way. */
  backend?: UsbBackend;
  /** The libusb binding; node-usb by default, loaded on first need (a fake in tests). */
  loadBinding?: UsbBindingLoader;
  usblp?: UsblpChannelOptions;
  libusb?: LibusbChannelOptions;
}

export class UsbLink implements ByteLink {
  readonly events = new TypedEvents<LinkEvents>();
  private channel: UsbChannel | null = null;
  private opening: Promise<void> | null = null;
  private binding: Promise<UsbBinding> | null = null;

  constructor(private readonly options: UsbLinkOptions) {}

  /** The printer's name on the bus, stable across re-plugs. */
  get target(): string {
    return `usb:${this.options.serialNumber}`;
  }

  /** What the printer is reached through now (`/dev/usb/lp1`, `libusb bus 1-2 address 5`), or null. */
  get device(): string | null {
    return this.channel?.device ?? null;
  }

  get isOpen(): boolean {
    return this.channel !== null;
  }

  open(): Promise<void> {
    if (this.channel) return Promise.resolve();
    this.opening ??= this.connect().finally(() => (this.opening = null));
    return this.opening;
  }

  private async connect(): Promise<void> {
    const backend = this.options.backend ?? 'auto';
    let channel: UsbChannel | null = null;
    let live = true;
    const handlers = {
      onData: (chunk: Buffer) => this.events.emit('data', chunk),
      onDrop: () => {
        live = false;
        if (!channel || this.channel !== channel) return;
        this.channel = null;
        this.events.emit('close');
      },
    };
    let usblpMiss = '';
    if (backend !== 'libusb') {
      const found = await findUsblpPrinter(this.options, this.options);
      if (found) channel = await UsblpChannel.open(found.device, handlers, this.options.usblp);
      else
        usblpMiss = `no usblp device in ${this.options.sysfsRoot ?? '/sys'}/class/usbmisc has serial number ${this.options.serialNumber}`;
    }
    if (!channel && backend === 'usblp') throw new AgentError('TRANSPORT_ERROR', usblpMiss);
    if (!channel) {
      let binding: UsbBinding;
      try {
        binding = await this.loadBinding();
      } catch (err) {
        const why = (err as Error).message;
        throw new AgentError('TRANSPORT_ERROR', usblpMiss ? `${usblpMiss}, and ${why}` : why, { cause: err });
      }
      try {
        channel = await LibusbChannel.open(binding, this.options, handlers, this.options.libusb);
      } catch (err) {
        if (!usblpMiss) throw err;
        throw new AgentError('TRANSPORT_ERROR', `${usblpMiss}; ${(err as Error).message}`, { cause: err });
      }
    }
    if (!live) throw new AgentError('TRANSPORT_CLOSED', `${this.target} went away as it was opened`);
    this.channel = channel;
  }

  /** Loaded once; a failed load is tried again at the next open (the package may be installed meanwhile). */
  private loadBinding(): Promise<UsbBinding> {
    this.binding ??= (this.options.loadBinding ?? loadNodeUsb)();
    this.binding.catch(() => (this.binding = null));
    return this.binding;
  }

  async write(data: Buffer): Promise<void> {
    await this.writeVia(data);
  }

  /** Writes and answers the device the bytes went through. */
  async writeVia(data: Buffer): Promise<string> {
    await this.open();
    const channel = this.channel;
    if (!channel) throw new AgentError('TRANSPORT_CLOSED', `${this.target} closed`);
    await channel.write(data);
    return channel.device;
  }

  async close(): Promise<void> {
    await this.opening?.catch(() => undefined);
    const channel = this.channel;
    this.channel = null;
    await channel?.close();
  }
}

/** A USB printer: sending is writing the bytes; the receipt names the printer and the device it went through. */
export class UsbTransport implements PrinterTransport {
  readonly kind = 'usb' as const;
  readonly link: UsbLink;

  constructor(options: UsbLinkOptions | UsbLink) {
    this.link = options instanceof UsbLink ? options : new UsbLink(options);
  }

  get target(): string {
    return this.link.target;
  }

  async send(data: Buffer): Promise<SendReceipt> {
    const device = await this.link.writeVia(data);
    return { reference: `${this.link.target} via ${device}`, bytes: data.length };
  }

  close(): Promise<void> {
    return this.link.close();
  }
}
