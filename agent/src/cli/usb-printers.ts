/**
 * The USB printers this machine can see, for `dpp-agent printers`: usblp devices from sysfs, and printer-class
 * devices through libusb when the `usb` package loads (a binding that does not load, or a libusb that cannot
 * list devices, is reported in one line, not thrown). A printer seen both ways is shown once, as usblp.
 */
import type { PrinterConfig } from '../config/index.js';
import {
  listLibusbPrinters,
  listUsblpPrinters,
  loadNodeUsb,
  matchesUsbPrinter,
  type UsbBindingLoader,
  type UsbPrinterInfo,
  type UsbRoots,
} from '../transports/index.js';
import { table } from './output.js';

/** Where to look: the real sysfs, /dev and node-usb by default; a fake tree and binding in tests. */
export interface UsbProbe extends UsbRoots {
  loadBinding?: UsbBindingLoader;
}

export interface SeenUsbPrinters {
  printers: UsbPrinterInfo[];
  /** Why libusb listed nothing (it did not load, or could not list), or null when it did list. */
  libusbProblem: string | null;
}

const sameDevice = (a: UsbPrinterInfo, b: UsbPrinterInfo) =>
  a.serialNumber !== null &&
  a.serialNumber === b.serialNumber &&
  a.vendorId === b.vendorId &&
  a.productId === b.productId;

export async function seenUsbPrinters(probe: UsbProbe = {}): Promise<SeenUsbPrinters> {
  const usblp = await listUsblpPrinters(probe);
  let libusb: UsbPrinterInfo[] = [];
  let libusbProblem: string | null = null;
  try {
    const binding = await (probe.loadBinding ?? loadNodeUsb)();
    try {
      libusb = await listLibusbPrinters(binding);
    } catch (err) {
      libusbProblem = `cannot list devices: ${(err as Error).message}`;
    }
  } catch (err) {
    libusbProblem = (err as Error).message;
  }
  return {
    printers: [...usblp, ...libusb.filter((l) => !usblp.some((u) => sameDevice(u, l)))],
    libusbProblem,
  };
}

const hex = (n: number) => n.toString(16).padStart(4, '0');

/** The section's lines: a table of what is seen, with the configured printer each one is. */
export function usbPrinterLines(seen: SeenUsbPrinters, configured: readonly PrinterConfig[]): string[] {
  const lines = ['', 'USB printers seen:'];
  if (seen.printers.length === 0) lines.push('  none');
  else {
    const rows = [['DEVICE', 'VID:PID', 'SERIAL', 'MANUFACTURER', 'PRODUCT', 'PRINTER']];
    for (const p of seen.printers) {
      const name = configured.find(
        (c) =>
          c.transport.type === 'usb' &&
          matchesUsbPrinter(p, {
            serialNumber: c.transport.serialNumber,
            vendorId: c.transport.vendorId,
            productId: c.transport.productId,
          }),
      )?.name;
      rows.push([
        p.device,
        `${hex(p.vendorId)}:${hex(p.productId)}`,
        p.serialNumber ?? '(none)',
        p.manufacturer ?? '',
        p.product ?? '',
        name ?? '-',
      ]);
    }
    lines.push(...table(rows).map((l) => `  ${l}`));
  }
  if (seen.libusbProblem) lines.push(`  libusb: ${seen.libusbProblem}`);
  return lines;
}
