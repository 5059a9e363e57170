/**
 * USB printers for tests, on a machine without USB: a fake sysfs tree laid out as Linux lays out usblp
 * devices, with `/dev/usb/lpN` standing as a link to a real character device (the simulator's pty); and a
 * fake WebUSB-like binding whose printer's bulk OUT and bulk IN are a byte line to the simulator. Test code only.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface FakeUsbPrinter {
  /** iSerialNumber. */
  serialNumber: string;
  vendorId?: number;
  productId?: number;
  manufacturer?: string;
  product?: string;
}

const ZEBRA = {
  vendorId: 0x0a5f,
  productId: 0x0166,
  manufacturer: 'Zebra Technologies',
  product: 'ZTC ZT411-203dpi ZPL',
};
const hex = (n: number) => n.toString(16).padStart(4, '0');

/**
 * `<root>/sys` and `<root>/dev` as Linux has them for usblp printers:
 * `sys/class/usbmisc/lpN -> ../../devices/.../usb1/1-P/1-P:1.0/usbmisc/lpN`, whose `device` is the interface
 * and whose interface's parent is the USB device with `serial`, `idVendor`, ...; `dev/usb/lpN` -> the device.
 */
export class FakeUsbSysfs {
  private constructor(readonly root: string) {}

  static async create(): Promise<FakeUsbSysfs> {
    const tree = new FakeUsbSysfs(await mkdtemp(path.join(os.tmpdir(), 'dpp-usb-')));
    await mkdir(path.join(tree.sysfsRoot, 'class', 'usbmisc'), { recursive: true });
    await mkdir(path.join(tree.devRoot, 'usb'), { recursive: true });
    return tree;
  }

  get sysfsRoot(): string {
    return path.join(this.root, 'sys');
  }

  get devRoot(): string {
    return path.join(this.root, 'dev');
  }

  private usbDeviceDir(port: number): string {
    return path.join(this.sysfsRoot, 'devices', 'pci0000:00', '0000:00:14.0', 'usb1', `1-${port}`);
  }

  /**
   * Plugs a printer in as `lp<lp>` on root hub port `port`; `/dev/usb/lp<lp>` links to `charDevice` (a pty
   * path stands in for the usblp node). Answers the node's path.
   */
  async plug(printer: FakeUsbPrinter, lp: number, charDevice: string, port = lp + 1): Promise<string> {
    const p = { ...ZEBRA, ...printer };
    const dev = this.usbDeviceDir(port);
    const iface = path.join(dev, `1-${port}:1.0`);
    const classDevice = path.join(iface, 'usbmisc', `lp${lp}`);
    await mkdir(classDevice, { recursive: true });
    const attrs: Record<string, string> = {
      idVendor: hex(p.vendorId),
      idProduct: hex(p.productId),
      serial: p.serialNumber,
      manufacturer: p.manufacturer,
      product: p.product,
      busnum: '1',
      devnum: String(port + 1),
    };
    for (const [name, value] of Object.entries(attrs)) await writeFile(path.join(dev, name), `${value}\n`);
    await writeFile(path.join(iface, 'bInterfaceClass'), '07\n');
    await writeFile(path.join(iface, 'bInterfaceProtocol'), '02\n');
    await writeFile(path.join(classDevice, 'dev'), `180:${lp}\n`);
    await writeFile(path.join(classDevice, 'uevent'), `MAJOR=180\nMINOR=${lp}\nDEVNAME=usb/lp${lp}\n`);
    await symlink('../..', path.join(classDevice, 'device'));
    await symlink(
      path.relative(path.join(this.sysfsRoot, 'class', 'usbmisc'), classDevice),
      path.join(this.sysfsRoot, 'class', 'usbmisc', `lp${lp}`),
    );
    const node = path.join(this.devRoot, 'usb', `lp${lp}`);
    await symlink(charDevice, node);
    return node;
  }

  /** Another usbmisc class device that is no printer (hiddev), which a scan must pass over. */
  async addHiddev(n: number): Promise<void> {
    const dir = path.join(this.usbDeviceDir(9), '1-9:1.0', 'usbmisc', `hiddev${n}`);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(this.usbDeviceDir(9), 'idVendor'), '046d\n');
    await writeFile(path.join(this.usbDeviceDir(9), 'idProduct'), 'c52b\n');
    await symlink('../..', path.join(dir, 'device'));
    await symlink(
      path.relative(path.join(this.sysfsRoot, 'class', 'usbmisc'), dir),
      path.join(this.sysfsRoot, 'class', 'usbmisc', `hiddev${n}`),
    );
  }

  /** Unplugs `lp<lp>` on `port`: its class device, its USB device and its node go. */
  async unplug(lp: number, port = lp + 1): Promise<void> {
    await rm(path.join(this.sysfsRoot, 'class', 'usbmisc', `lp${lp}`), { force: true });
    await rm(this.usbDeviceDir(port), { recursive: true, force: true });
    await rm(path.join(this.devRoot, 'usb', `lp${lp}`), { force: true });
  }

  async close(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** The printer behind a fake USB device: bulk OUT bytes are written to it, what it answers comes back on bulk IN. */
export interface PrinterLine {
  write(data: Buffer): Promise<void>;
  /** Registers a listener for the printer's answers; answers the unsubscribe. */
  onData(listener: (chunk: Buffer) => void): () => void;
}

export interface FakeEndpoint {
  endpointNumber: number;
  direction: 'in' | 'out';
  type: 'bulk' | 'interrupt' | 'isochronous';
  packetSize: number;
}
export interface FakeAlternate {
  alternateSetting: number;
  interfaceClass: number;
  interfaceSubclass: number;
  interfaceProtocol: number;
  endpoints: FakeEndpoint[];
}
export interface FakeInterface {
  interfaceNumber: number;
  claimed: boolean;
  alternate: FakeAlternate;
  alternates: FakeAlternate[];
}
export interface FakeConfiguration {
  configurationValue: number;
  interfaces: FakeInterface[];
}

function iface(n: number, alt: Omit<FakeAlternate, 'alternateSetting'>): FakeInterface {
  const a = { alternateSetting: 0, ...alt };
  return { interfaceNumber: n, claimed: false, alternate: a, alternates: [a] };
}

/** USB Printer Class 1.1: class 7, subclass 1, protocol 2 (bidirectional), bulk OUT 1 and bulk IN 0x82. */
export function printerInterface(n = 0): FakeInterface {
  return iface(n, {
    interfaceClass: 7,
    interfaceSubclass: 1,
    interfaceProtocol: 2,
    endpoints: [
      { endpointNumber: 1, direction: 'out', type: 'bulk', packetSize: 512 },
      { endpointNumber: 2, direction: 'in', type: 'bulk', packetSize: 512 },
    ],
  });
}

/** Protocol 1: bulk OUT only, the printer cannot answer. */
export function oneWayPrinterInterface(n = 0): FakeInterface {
  return iface(n, {
    interfaceClass: 7,
    interfaceSubclass: 1,
    interfaceProtocol: 1,
    endpoints: [{ endpointNumber: 1, direction: 'out', type: 'bulk', packetSize: 512 }],
  });
}

/** A vendor-specific interface with bulk endpoints (a scanner, a serial adapter): no printer. */
export function vendorInterface(n = 0): FakeInterface {
  return iface(n, {
    interfaceClass: 0xff,
    interfaceSubclass: 0,
    interfaceProtocol: 0,
    endpoints: [
      { endpointNumber: 1, direction: 'out', type: 'bulk', packetSize: 64 },
      { endpointNumber: 2, direction: 'in', type: 'bulk', packetSize: 64 },
    ],
  });
}

export interface FakeUsbDeviceOptions extends FakeUsbPrinter {
  bus?: string;
  address?: number;
  interfaces?: FakeInterface[];
  /** A kernel driver (usblp) holds these interfaces until detached; interface 0 by default. */
  kernelDriverOn?: number[];
  line?: PrinterLine;
}

/** A device as node-usb's WebUSB API shows it, its printer end a {@link PrinterLine}. */
export class FakeUsbDevice {
  readonly vendorId: number;
  readonly productId: number;
  readonly serialNumber: string;
  readonly manufacturerName: string;
  readonly productName: string;
  readonly bus: string;
  readonly address: number;
  readonly configurations: FakeConfiguration[];
  configuration: FakeConfiguration | null;
  opened = false;
  connected = true;
  /** Every bulk OUT transfer, with its endpoint. */
  readonly outTransfers: { endpoint: number; data: Buffer }[] = [];
  /** Endpoints bulk IN transfers were asked of. */
  readonly inEndpoints = new Set<number>();
  readonly detached: number[] = [];
  private readonly kernelDriver: Set<number>;
  private readonly claimed = new Set<number>();
  private readonly inbox: Buffer[] = [];
  private pending: { length: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  private readonly off: () => void;

  constructor(private readonly options: FakeUsbDeviceOptions) {
    const p = { ...ZEBRA, ...options };
    this.vendorId = p.vendorId;
    this.productId = p.productId;
    this.serialNumber = p.serialNumber;
    this.manufacturerName = p.manufacturer;
    this.productName = p.product;
    this.bus = options.bus ?? '1-2';
    this.address = options.address ?? 5;
    this.configurations = [{ configurationValue: 1, interfaces: options.interfaces ?? [printerInterface()] }];
    this.configuration = this.configurations[0]!;
    this.kernelDriver = new Set(options.kernelDriverOn ?? [0]);
    this.off = options.line?.onData((chunk) => this.answer(chunk)) ?? (() => {});
  }

  private answer(chunk: Buffer): void {
    this.inbox.push(chunk);
    this.serve();
  }

  private serve(): void {
    if (!this.pending || this.inbox.length === 0) return;
    const { length, resolve } = this.pending;
    this.pending = null;
    const all = Buffer.concat(this.inbox.splice(0));
    resolve(all.subarray(0, length));
    if (all.length > length) this.inbox.push(all.subarray(length));
  }

  private check(): void {
    if (!this.connected) throw new Error('device disconnected');
    if (!this.opened) throw new Error('device not opened');
  }

  private endpoint(direction: 'in' | 'out', n: number): void {
    const ok = this.configuration?.interfaces.some(
      (i) =>
        this.claimed.has(i.interfaceNumber) &&
        i.alternate.endpoints.some(
          (e) => e.direction === direction && e.endpointNumber === n && e.type === 'bulk',
        ),
    );
    if (!ok) throw new Error(`endpoint ${direction} ${n} not found on a claimed interface`);
  }

  async open(): Promise<void> {
    if (!this.connected) throw new Error('device disconnected');
    this.opened = true;
  }

  async close(): Promise<void> {
    this.opened = false;
    this.claimed.clear();
    this.pending?.reject(new Error('transfer was cancelled'));
    this.pending = null;
  }

  async selectConfiguration(value: number): Promise<void> {
    this.check();
    this.configuration = this.configurations.find((c) => c.configurationValue === value) ?? null;
    if (!this.configuration) throw new Error(`no configuration ${value}`);
  }

  async claimInterface(n: number): Promise<void> {
    this.check();
    if (!this.configuration?.interfaces.some((i) => i.interfaceNumber === n))
      throw new Error('interface not found');
    if (this.kernelDriver.has(n)) throw new Error('failed to claim interface: interface is busy');
    this.claimed.add(n);
  }

  async releaseInterface(n: number): Promise<void> {
    this.claimed.delete(n);
  }

  async selectAlternateInterface(n: number, alternate: number): Promise<void> {
    this.check();
    const i = this.configuration?.interfaces.find((x) => x.interfaceNumber === n);
    const a = i?.alternates.find((x) => x.alternateSetting === alternate);
    if (!i || !a) throw new Error('alternate not found');
    i.alternate = a;
  }

  async detachKernelDriver(n: number): Promise<void> {
    if (!this.kernelDriver.delete(n)) throw new Error('no kernel driver attached');
    this.detached.push(n);
  }

  async clearHalt(): Promise<void> {
    this.check();
  }

  async transferOut(endpoint: number, data: Uint8Array): Promise<{ bytesWritten: number; status: 'ok' }> {
    this.check();
    this.endpoint('out', endpoint);
    const bytes = Buffer.from(data);
    this.outTransfers.push({ endpoint, data: bytes });
    await this.options.line?.write(bytes);
    return { bytesWritten: bytes.length, status: 'ok' };
  }

  async transferIn(
    endpoint: number,
    length: number,
    timeout = 1000,
  ): Promise<{ data?: DataView; status: 'ok' }> {
    this.check();
    this.endpoint('in', endpoint);
    this.inEndpoints.add(endpoint);
    if (this.pending) throw new Error('endpoint already in use');
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        reject(new Error('transfer was cancelled'));
      }, timeout);
      this.pending = {
        length,
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.serve();
    });
    const copy = Uint8Array.from(bytes);
    return { data: new DataView(copy.buffer), status: 'ok' };
  }

  /** The cable is pulled: transfers fail with "device disconnected" and the device leaves the bus. */
  unplug(): void {
    this.connected = false;
    this.opened = false;
    this.pending?.reject(new Error('device disconnected'));
    this.pending = null;
    this.off();
  }
}

/** The binding: `getDevices()` lists the connected devices, or fails as libusb does without a USB bus. */
export class FakeUsbBinding {
  readonly devices: FakeUsbDevice[] = [];
  /** Set to make `getDevices()` reject with this message. */
  failWith: string | null = null;

  plug(device: FakeUsbDevice): FakeUsbDevice {
    this.devices.push(device);
    return device;
  }

  unplug(device: FakeUsbDevice): void {
    device.unplug();
    this.devices.splice(this.devices.indexOf(device), 1);
  }

  async getDevices(): Promise<FakeUsbDevice[]> {
    if (this.failWith) throw new Error(this.failWith);
    return this.devices.filter((d) => d.connected);
  }
}
