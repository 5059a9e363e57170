/**
 * The USB transport through libusb, with a fake WebUSB-like binding in the place of node-usb (as serialport is
 * tested with its mock binding): the fake device's bulk OUT and bulk IN are a line to the simulated printer, so
 * ZPL goes out and `~HS`/`^HV` answers come back through the endpoints the transport picked. A re-plug at
 * another address, and devices that cannot serve as a two-way printer, refused.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPrinter, type PrinterHandle } from '@dpp/firmware-sim';
import { claimsFor } from '@dpp/testkit/agent';
import {
  FakeUsbBinding,
  FakeUsbDevice,
  oneWayPrinterInterface,
  printerInterface,
  vendorInterface,
  type PrinterLine,
} from '@dpp/testkit/usb';
import { isAgentError } from '../errors.js';
import { ZplPrinter } from '../printers/zpl-printer.js';
import { renderLabel } from '../render/index.js';
import { listLibusbPrinters } from './libusb.js';
import { SerialLink } from './serial.js';
import { UsbTransport } from './usb.js';

const SERIAL = '52J194800777';

let sim: PrinterHandle;
let printerEnd: SerialLink;
let binding: FakeUsbBinding;
let transport: UsbTransport;
let driver: ZplPrinter;

/** The printer's side of the USB cable: the simulator on its pty. */
function line(): PrinterLine {
  return { write: (d) => printerEnd.write(d), onData: (l) => printerEnd.events.on('data', l) };
}

beforeEach(async () => {
  sim = await startPrinter({ transport: 'pty' });
  printerEnd = new SerialLink({ path: sim.path!, baudRate: 115200 });
  await printerEnd.open();
  binding = new FakeUsbBinding();
  transport = new UsbTransport({
    serialNumber: SERIAL,
    backend: 'libusb',
    loadBinding: () => Promise.resolve(binding),
    libusb: { readTimeoutMs: 200 },
  });
  driver = new ZplPrinter({ name: 'zebra-usb', transport, statusTimeoutMs: 1000 });
});
afterEach(async () => {
  await driver?.close();
  await printerEnd?.close();
  await sim?.close();
});

describe('UsbTransport through libusb (a fake binding)', () => {
  it('writes to bulk OUT, reads the answers from bulk IN, and reads the tag back', async () => {
    const other = binding.plug(new FakeUsbDevice({ serialNumber: 'SOMEONE-ELSE', address: 3 }));
    const dev = binding.plug(
      new FakeUsbDevice({
        serialNumber: SERIAL,
        bus: '1-4',
        address: 9,
        // interface 0 is the vendor's own; the printer is interface 1, held by usblp until detached
        interfaces: [vendorInterface(0), printerInterface(1)],
        kernelDriverOn: [1],
        line: line(),
      }),
    );
    expect(await driver.status()).toMatchObject({ source: 'HS', ready: true });
    expect(dev.detached).toEqual([1]);
    expect(dev.outTransfers[0]).toEqual({ endpoint: 1, data: Buffer.from('~HS') });
    expect([...dev.inEndpoints]).toEqual([2]);
    expect(other.opened).toBe(false);

    const claims = claimsFor('9201');
    const { payload } = await renderLabel(claims, { language: 'zpl', dpi: 203, rfid: true, template: {} });
    const receipt = await driver.send(payload);
    expect(receipt).toEqual({
      reference: `usb:${SERIAL} via libusb bus 1-4 address 9`,
      bytes: payload.length,
    });
    expect(Buffer.concat(dev.outTransfers.map((t) => t.data)).includes(payload)).toBe(true);
    const done = await driver.awaitCompletion({ expectedEpc: claims.sgtin96_epc!, timeoutMs: 15_000 });
    expect(done).toMatchObject({ epcReadBack: claims.sgtin96_epc! });
    expect(sim.labels.map((l) => l.epc)).toEqual([claims.sgtin96_epc!]);
  });

  it('reports paper out from ~HS read on bulk IN', async () => {
    binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, line: line() }));
    sim.faults.set('paperOut', true);
    expect(await driver.status()).toMatchObject({ ready: false, paperOut: true });
  });

  it('drops the line when the device is unplugged and finds it again at its new address', async () => {
    const first = binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, address: 5, line: line() }));
    expect((await driver.status()).ready).toBe(true);
    const closed = new Promise<void>((resolve) => transport.link.events.once('close', () => resolve()));
    binding.unplug(first);
    await closed;
    await expect(driver.status()).rejects.toThrow(`no USB device with serial number ${SERIAL} (libusb)`);
    const second = binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, address: 6, line: line() }));
    expect((await driver.status()).ready).toBe(true);
    expect(transport.link.device).toBe('libusb bus 1-2 address 6');
    expect(second.outTransfers.length).toBeGreaterThan(0);
  });

  it('refuses a device without a printer interface, and a printer that can only listen', async () => {
    binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, interfaces: [vendorInterface(0)], line: line() }));
    let err = await driver.status().catch((e: unknown) => e);
    expect(isAgentError(err, 'TRANSPORT_ERROR')).toBe(true);
    expect((err as Error).message).toBe(
      `libusb bus 1-2 address 5 (serial ${SERIAL}): it has no printer-class interface (USB class 7)`,
    );
    binding.devices.length = 0;
    binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, interfaces: [oneWayPrinterInterface(0)] }));
    err = await driver.status().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/one-way \(no bulk IN endpoint\), so it cannot report status$/);
    expect(sim.labels).toHaveLength(0);
  });

  it('says so when libusb cannot list devices', async () => {
    binding.failWith = '/sys/bus/usb/devices/ not found';
    const err = await driver.status().catch((e: unknown) => e);
    expect(isAgentError(err, 'TRANSPORT_ERROR')).toBe(true);
    expect((err as Error).message).toBe('libusb cannot list devices: /sys/bus/usb/devices/ not found');
  });

  it('lists printer-class devices only', async () => {
    binding.plug(new FakeUsbDevice({ serialNumber: SERIAL, bus: '1-4', address: 9 }));
    binding.plug(new FakeUsbDevice({ serialNumber: 'SCANNER-1', interfaces: [vendorInterface(0)] }));
    expect(await listLibusbPrinters(binding)).toEqual([
      {
        via: 'libusb',
        device: 'libusb bus 1-4 address 9',
        vendorId: 0x0a5f,
        productId: 0x0166,
        serialNumber: SERIAL,
        manufacturer: 'Zebra Technologies',
        product: 'ZTC ZT411-203dpi ZPL',
      },
    ]);
  });
});

describe('node-usb', () => {
  it('loads here from its prebuilt binary, as the default binding', async () => {
    const { loadNodeUsb } = await import('./libusb.js');
    const usb = await loadNodeUsb();
    expect(typeof usb.getDevices).toBe('function');
  });
});
