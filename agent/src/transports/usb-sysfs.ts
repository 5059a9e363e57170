/**
 * Linux `usblp` printers found through sysfs, never by a device path that changes on a re-plug. Each usblp
 * device is a class device `/sys/class/usbmisc/lpN` whose `device` link is the USB interface it is bound to
 * (`.../usb1/1-2/1-2:1.0`); the interface's parent folder is the USB device, whose `serial`, `idVendor`,
 * `idProduct`, `manufacturer` and `product` files hold its descriptors (iSerialNumber and the rest). The node
 * udev makes for it is named by `DEVNAME` in the class device's `uevent` (`usb/lp0` under /dev).
 */
import { readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';

/** A USB printer the agent can see, through usblp or libusb. */
export interface UsbPrinterInfo {
  via: 'usblp' | 'libusb';
  /** `/dev/usb/lp0` for usblp; `bus 1-2 address 5` for libusb. */
  device: string;
  vendorId: number;
  productId: number;
  /** iSerialNumber; null when the printer has none (it cannot then be configured). */
  serialNumber: string | null;
  manufacturer: string | null;
  product: string | null;
}

export interface UsbRoots {
  /** The sysfs mount; `/sys` by default (a fake tree in tests). */
  sysfsRoot?: string;
  /** Where device nodes are; `/dev` by default. */
  devRoot?: string;
}

async function readAttr(dir: string, name: string): Promise<string | null> {
  try {
    return (await readFile(path.join(dir, name), 'utf8')).trim();
  } catch {
    return null;
  }
}

function hex16(text: string | null): number | null {
  return text && /^[0-9a-fA-F]{1,4}$/.test(text) ? parseInt(text, 16) : null;
}

/** The node's path under `devRoot`, from `DEVNAME=` in the uevent (usb/lpN when udev's rule is the default). */
async function devicePath(classDir: string, name: string, devRoot: string): Promise<string> {
  const uevent = (await readAttr(classDir, 'uevent')) ?? '';
  const devname = /^DEVNAME=(.+)$/m.exec(uevent)?.[1]?.trim() ?? `usb/${name}`;
  return path.join(devRoot, devname);
}

/** One usblp class device, or null when it is not (or no longer) a USB printer interface. */
async function readUsblp(sysfsRoot: string, devRoot: string, name: string): Promise<UsbPrinterInfo | null> {
  const classDir = path.join(sysfsRoot, 'class', 'usbmisc', name);
  let iface: string;
  try {
    iface = await realpath(path.join(classDir, 'device'));
  } catch {
    return null; // unplugged between the listing and this read
  }
  const usbDevice = path.dirname(iface);
  const [vendor, product, serial, manufacturer, productName] = await Promise.all(
    ['idVendor', 'idProduct', 'serial', 'manufacturer', 'product'].map((a) => readAttr(usbDevice, a)),
  );
  const vendorId = hex16(vendor ?? null);
  const productId = hex16(product ?? null);
  if (vendorId === null || productId === null) return null;
  return {
    via: 'usblp',
    device: await devicePath(classDir, name, devRoot),
    vendorId,
    productId,
    serialNumber: serial || null,
    manufacturer: manufacturer || null,
    product: productName || null,
  };
}

/** Every usblp printer in sysfs, by lp number; empty when usblp is not loaded (or this is not Linux). */
export async function listUsblpPrinters(roots: UsbRoots = {}): Promise<UsbPrinterInfo[]> {
  const sysfsRoot = roots.sysfsRoot ?? '/sys';
  const devRoot = roots.devRoot ?? '/dev';
  let names: string[];
  try {
    names = await readdir(path.join(sysfsRoot, 'class', 'usbmisc'));
  } catch {
    return [];
  }
  const lp = names.filter((n) => /^lp\d+$/.test(n)).sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)));
  const found = await Promise.all(lp.map((n) => readUsblp(sysfsRoot, devRoot, n)));
  return found.filter((p): p is UsbPrinterInfo => p !== null);
}

export interface UsbPrinterMatch {
  serialNumber: string;
  vendorId?: number | undefined;
  productId?: number | undefined;
}

/** True when the printer is the one configured: its serial number, and its ids when they are given. */
export function matchesUsbPrinter(p: Omit<UsbPrinterInfo, 'via' | 'device'>, want: UsbPrinterMatch): boolean {
  return (
    p.serialNumber === want.serialNumber &&
    (want.vendorId === undefined || p.vendorId === want.vendorId) &&
    (want.productId === undefined || p.productId === want.productId)
  );
}

/** The usblp printer with this serial number now, at whatever lpN it has; null when none has it. */
export async function findUsblpPrinter(
  want: UsbPrinterMatch,
  roots: UsbRoots = {},
): Promise<UsbPrinterInfo | null> {
  return (await listUsblpPrinters(roots)).find((p) => matchesUsbPrinter(p, want)) ?? null;
}
