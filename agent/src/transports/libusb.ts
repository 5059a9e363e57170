/**
 * A USB printer through libusb, where there is no usblp node (macOS, Windows with WinUSB, a Linux without
 * usblp): the `usb` package (node-usb 3, WebUSB API) is the binding, injected like serialport's so tests hand
 * in a fake. The printer-class interface (USB class 7) is claimed, its kernel driver detached where one holds
 * it; bulk OUT carries the ZPL, bulk IN the printer's answers (`~HS`, `~HQES`, `^HV`), read continuously.
 * USB Printer Class 1.1 §4.2: protocol 2 is the bidirectional interface; protocol 1 has no bulk IN, so a
 * printer offering only that is refused (no status could be read, which is the whole point).
 */
import { AgentError } from '../errors.js';
import { matchesUsbPrinter, type UsbPrinterInfo, type UsbPrinterMatch } from './usb-sysfs.js';
import { USB_WRITE_STALL_MS, type UsbChannel, type UsbChannelHandlers } from './usb-channel.js';

export interface UsbBindingEndpoint {
  endpointNumber: number;
  direction: 'in' | 'out';
  type: 'bulk' | 'interrupt' | 'isochronous';
  packetSize: number;
}

export interface UsbBindingAlternate {
  alternateSetting: number;
  interfaceClass: number;
  interfaceSubclass: number;
  interfaceProtocol: number;
  endpoints: UsbBindingEndpoint[];
}

export interface UsbBindingInterface {
  interfaceNumber: number;
  alternate: UsbBindingAlternate;
  alternates: UsbBindingAlternate[];
}

export interface UsbBindingConfiguration {
  configurationValue: number;
  interfaces: UsbBindingInterface[];
}

/** The part of node-usb's `UsbDevice` (a WebUSB `USBDevice` plus Linux driver detach) the agent uses. */
export interface UsbBindingDevice {
  readonly vendorId: number;
  readonly productId: number;
  readonly serialNumber?: string | null | undefined;
  readonly manufacturerName?: string | null | undefined;
  readonly productName?: string | null | undefined;
  /** node-usb: `1-2`, the bus and ports. */
  readonly bus?: string;
  readonly address?: number;
  readonly configuration?: UsbBindingConfiguration | null | undefined;
  readonly configurations: UsbBindingConfiguration[];
  open(): Promise<void>;
  close(): Promise<void>;
  selectConfiguration(configurationValue: number): Promise<void>;
  claimInterface(interfaceNumber: number): Promise<void>;
  releaseInterface(interfaceNumber: number): Promise<void>;
  selectAlternateInterface(interfaceNumber: number, alternateSetting: number): Promise<void>;
  transferIn(
    endpointNumber: number,
    length: number,
    timeout?: number,
  ): Promise<{ data?: DataView | undefined; status: string }>;
  transferOut(
    endpointNumber: number,
    data: Uint8Array,
    timeout?: number,
  ): Promise<{ bytesWritten: number; status: string }>;
  clearHalt(direction: 'in' | 'out', endpointNumber: number): Promise<void>;
  /** Linux only: takes the interface from the kernel driver (usblp) holding it. */
  detachKernelDriver?(interfaceNumber: number): Promise<void>;
}

export interface UsbBinding {
  getDevices(): Promise<UsbBindingDevice[]>;
}

export type UsbBindingLoader = () => Promise<UsbBinding>;

/** node-usb's `usb` object (every device allowed, no WebUSB permission prompt). Rejects when it does not load. */
export const loadNodeUsb: UsbBindingLoader = async () => {
  try {
    const mod = await import('usb');
    return mod.usb as unknown as UsbBinding;
  } catch (err) {
    throw new AgentError(
      'TRANSPORT_ERROR',
      `the usb package (libusb) did not load: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
};

export const USB_CLASS_PRINTER = 7;

/** How a device shows in listings and receipts. */
export function libusbDeviceName(d: UsbBindingDevice): string {
  const hex = (n: number) => n.toString(16).padStart(4, '0');
  return d.bus !== undefined && d.address !== undefined
    ? `libusb bus ${d.bus} address ${d.address}`
    : `libusb ${hex(d.vendorId)}:${hex(d.productId)}`;
}

export function libusbPrinterInfo(d: UsbBindingDevice): UsbPrinterInfo {
  return {
    via: 'libusb',
    device: libusbDeviceName(d),
    vendorId: d.vendorId,
    productId: d.productId,
    serialNumber: d.serialNumber || null,
    manufacturer: d.manufacturerName || null,
    product: d.productName || null,
  };
}

interface PrinterInterface {
  configurationValue: number;
  interfaceNumber: number;
  alternate: UsbBindingAlternate;
  currentAlternate: number;
  bulkIn: UsbBindingEndpoint;
  bulkOut: UsbBindingEndpoint;
}

/** The bidirectional printer interface of a device, or why it has none. */
export function findPrinterInterface(d: UsbBindingDevice): PrinterInterface | string {
  let oneWay = false;
  const configs = d.configuration ? [d.configuration, ...d.configurations] : d.configurations;
  for (const config of configs) {
    for (const iface of config.interfaces) {
      const alternates = [iface.alternate, ...iface.alternates.filter((a) => a !== iface.alternate)];
      for (const alt of alternates) {
        if (alt.interfaceClass !== USB_CLASS_PRINTER) continue;
        const bulk = (dir: 'in' | 'out') =>
          alt.endpoints.find((e) => e.type === 'bulk' && e.direction === dir);
        const bulkIn = bulk('in');
        const bulkOut = bulk('out');
        if (!bulkOut) continue;
        if (!bulkIn) {
          oneWay = true;
          continue;
        }
        return {
          configurationValue: config.configurationValue,
          interfaceNumber: iface.interfaceNumber,
          alternate: alt,
          currentAlternate: iface.alternate.alternateSetting,
          bulkIn,
          bulkOut,
        };
      }
    }
  }
  return oneWay
    ? 'its printer interface is one-way (no bulk IN endpoint), so it cannot report status'
    : `it has no printer-class interface (USB class ${USB_CLASS_PRINTER})`;
}

/** Every printer-class device the binding sees (a device without a printer interface is left out). */
export async function listLibusbPrinters(binding: UsbBinding): Promise<UsbPrinterInfo[]> {
  const devices = await binding.getDevices();
  return devices
    .filter((d) =>
      [d.configuration, ...d.configurations].some((c) =>
        c?.interfaces.some((i) => i.alternates.some((a) => a.interfaceClass === USB_CLASS_PRINTER)),
      ),
    )
    .map(libusbPrinterInfo);
}

/** A nusb transfer that ran out its timeout is cancelled; that is no error, just a quiet printer. */
function isTimeout(err: unknown): boolean {
  return /cancel|timed? ?out/i.test(String((err as Error | null)?.message ?? err));
}

export interface LibusbChannelOptions {
  /** How long one bulk IN transfer waits before it is issued again. */
  readTimeoutMs?: number;
  writeStallMs?: number;
}

export class LibusbChannel implements UsbChannel {
  readonly device: string;
  private closed = false;
  private writes: Promise<unknown> = Promise.resolve();
  private readonly reading: Promise<void>;

  private constructor(
    private readonly dev: UsbBindingDevice,
    private readonly iface: PrinterInterface,
    private readonly handlers: UsbChannelHandlers,
    private readonly options: LibusbChannelOptions,
  ) {
    this.device = libusbDeviceName(dev);
    this.reading = this.readLoop();
  }

  /** Finds the printer by serial number now, claims its printer interface and starts reading bulk IN. */
  static async open(
    binding: UsbBinding,
    want: UsbPrinterMatch,
    handlers: UsbChannelHandlers,
    options: LibusbChannelOptions = {},
  ): Promise<LibusbChannel> {
    let devices: UsbBindingDevice[];
    try {
      devices = await binding.getDevices();
    } catch (err) {
      throw new AgentError('TRANSPORT_ERROR', `libusb cannot list devices: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const dev = devices.find((d) => matchesUsbPrinter(libusbPrinterInfo(d), want));
    if (!dev)
      throw new AgentError(
        'TRANSPORT_ERROR',
        `no USB device with serial number ${want.serialNumber} (libusb)`,
      );
    const iface = findPrinterInterface(dev);
    const name = `${libusbDeviceName(dev)} (serial ${want.serialNumber})`;
    if (typeof iface === 'string') throw new AgentError('TRANSPORT_ERROR', `${name}: ${iface}`);
    try {
      await dev.open();
    } catch (err) {
      throw new AgentError('TRANSPORT_ERROR', `cannot open ${name}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      if (dev.configuration?.configurationValue !== iface.configurationValue)
        await dev.selectConfiguration(iface.configurationValue);
      // usblp (or another driver) may hold the interface; with no driver attached this fails, which is fine.
      await dev.detachKernelDriver?.(iface.interfaceNumber).catch(() => undefined);
      await dev.claimInterface(iface.interfaceNumber);
      if (iface.alternate.alternateSetting !== iface.currentAlternate)
        await dev.selectAlternateInterface(iface.interfaceNumber, iface.alternate.alternateSetting);
    } catch (err) {
      await dev.close().catch(() => undefined);
      throw new AgentError(
        'TRANSPORT_ERROR',
        `cannot claim the printer interface ${iface.interfaceNumber} of ${name}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return new LibusbChannel(dev, iface, handlers, options);
  }

  private async readLoop(): Promise<void> {
    const ep = this.iface.bulkIn;
    const length = Math.max(ep.packetSize, 64) * 8;
    while (!this.closed) {
      let r: { data?: DataView | undefined; status: string };
      try {
        r = await this.dev.transferIn(ep.endpointNumber, length, this.options.readTimeoutMs ?? 1000);
      } catch (err) {
        if (this.closed) return;
        if (isTimeout(err)) continue;
        return this.drop(err as Error);
      }
      if (this.closed) return;
      if (r.status === 'stall') {
        try {
          await this.dev.clearHalt('in', ep.endpointNumber);
        } catch (err) {
          return this.drop(err as Error);
        }
        continue;
      }
      if (r.data && r.data.byteLength > 0)
        this.handlers.onData(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength));
    }
  }

  private drop(reason: Error): void {
    if (this.closed) return;
    this.closed = true;
    void this.dev.close().catch(() => undefined);
    this.handlers.onDrop(reason);
  }

  write(data: Buffer): Promise<void> {
    const run = this.writes.then(() => this.writeAll(data));
    this.writes = run.catch(() => undefined);
    return run;
  }

  private async writeAll(data: Buffer): Promise<void> {
    const ep = this.iface.bulkOut.endpointNumber;
    let offset = 0;
    while (offset < data.length) {
      if (this.closed) throw new AgentError('TRANSPORT_CLOSED', `${this.device} closed while writing`);
      let r: { bytesWritten: number; status: string };
      try {
        r = await this.dev.transferOut(
          ep,
          data.subarray(offset),
          this.options.writeStallMs ?? USB_WRITE_STALL_MS,
        );
      } catch (err) {
        if (isTimeout(err))
          throw new AgentError('TRANSPORT_ERROR', `${this.device} took no data: ${(err as Error).message}`, {
            cause: err,
          });
        this.drop(err as Error);
        throw new AgentError('TRANSPORT_CLOSED', `write to ${this.device}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      if (r.status === 'stall') {
        await this.dev.clearHalt('out', ep).catch(() => undefined);
        throw new AgentError('TRANSPORT_ERROR', `${this.device}: bulk OUT stalled after ${offset} bytes`);
      }
      if (r.bytesWritten <= 0)
        throw new AgentError(
          'TRANSPORT_ERROR',
          `${this.device} took no data (${offset} of ${data.length} written)`,
        );
      offset += r.bytesWritten;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dev.releaseInterface(this.iface.interfaceNumber).catch(() => undefined);
    await this.dev.close().catch(() => undefined);
    await Promise.all([this.writes, this.reading]);
  }
}
