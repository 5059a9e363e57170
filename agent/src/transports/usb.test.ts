/**
 * The USB transport through usblp, against the simulated printer: a pty from socat stands in for
 * `/dev/usb/lpN` (a real character device) and a fake sysfs tree names its USB serial number. Status, the
 * RFID read-back and paper out over it; a re-plug to another lpN found again by serial number.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PtyTransport, startPrinter, type DeviceConnection, type PrinterHandle } from '@dpp/firmware-sim';
import { claimsFor } from '@dpp/testkit/agent';
import { FakeUsbSysfs } from '@dpp/testkit/usb';
import { isAgentError } from '../errors.js';
import { ZplPrinter } from '../printers/zpl-printer.js';
import { renderLabel } from '../render/index.js';
import { UsbTransport } from './usb.js';
import { findUsblpPrinter, listUsblpPrinters } from './usb-sysfs.js';

const SERIAL = 'D8N231500123';

let tree: FakeUsbSysfs;
beforeEach(async () => {
  tree = await FakeUsbSysfs.create();
});
afterEach(() => tree.close());

describe('usblp printers in sysfs', () => {
  it('lists each lpN with its USB ids and strings, passes over other usbmisc devices, finds one by serial', async () => {
    await tree.plug({ serialNumber: 'OTHER-1', productId: 0x00a0 }, 0, '/dev/null');
    await tree.plug({ serialNumber: SERIAL }, 2, '/dev/null', 4);
    await tree.addHiddev(0);
    const roots = { sysfsRoot: tree.sysfsRoot, devRoot: tree.devRoot };
    const all = await listUsblpPrinters(roots);
    expect(all).toEqual([
      {
        via: 'usblp',
        device: `${tree.devRoot}/usb/lp0`,
        vendorId: 0x0a5f,
        productId: 0x00a0,
        serialNumber: 'OTHER-1',
        manufacturer: 'Zebra Technologies',
        product: 'ZTC ZT411-203dpi ZPL',
      },
      expect.objectContaining({ device: `${tree.devRoot}/usb/lp2`, serialNumber: SERIAL, productId: 0x0166 }),
    ]);
    expect((await findUsblpPrinter({ serialNumber: SERIAL }, roots))?.device).toBe(`${tree.devRoot}/usb/lp2`);
    expect(await findUsblpPrinter({ serialNumber: SERIAL, productId: 0x00a0 }, roots)).toBeNull();
    expect(await findUsblpPrinter({ serialNumber: 'NOPE' }, roots)).toBeNull();
    expect(await listUsblpPrinters({ sysfsRoot: `${tree.root}/absent` })).toEqual([]);
  });
});

describe('UsbTransport through usblp, on the simulator', () => {
  let sim: PrinterHandle;
  let line: DeviceConnection | null = null;
  let transport: UsbTransport;
  let driver: ZplPrinter;

  beforeEach(async () => {
    const pty = new PtyTransport({ name: 'usb-printer' });
    pty.events.on('connection', (c) => (line = c));
    sim = await startPrinter({ transport: pty });
    await tree.plug({ serialNumber: SERIAL }, 0, sim.path!);
    transport = new UsbTransport({
      serialNumber: SERIAL,
      vendorId: 0x0a5f,
      backend: 'usblp',
      sysfsRoot: tree.sysfsRoot,
      devRoot: tree.devRoot,
    });
    driver = new ZplPrinter({ name: 'zebra-usb', transport, statusTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await driver?.close();
    await sim?.close();
  });

  it('asks ~HS over the device, prints a label and reads its tag back with ^HV', async () => {
    expect(await driver.status()).toMatchObject({ source: 'HS', ready: true, formatsInBuffer: 0 });
    const claims = claimsFor('9101');
    const { payload } = await renderLabel(claims, { language: 'zpl', dpi: 203, rfid: true, template: {} });
    const receipt = await driver.send(payload);
    expect(receipt).toEqual({
      reference: `usb:${SERIAL} via ${tree.devRoot}/usb/lp0`,
      bytes: payload.length,
    });
    const done = await driver.awaitCompletion({ expectedEpc: claims.sgtin96_epc!, timeoutMs: 15_000 });
    expect(done).toMatchObject({ evidence: 'printer', epcReadBack: claims.sgtin96_epc!, voidLabels: 0 });
    expect(sim.labels.map((l) => l.epc)).toEqual([claims.sgtin96_epc!]);
  });

  it('sees paper out in the status, so a gate on it holds the label back', async () => {
    sim.faults.set('paperOut', true);
    expect(await driver.status()).toMatchObject({ ready: false, paperOut: true });
    sim.faults.set('paperOut', false);
    expect(await driver.status()).toMatchObject({ ready: true, paperOut: false });
  });

  it('finds the printer again by serial number after a re-plug as another lpN', async () => {
    expect((await driver.status()).ready).toBe(true);
    expect(transport.link.device).toBe(`${tree.devRoot}/usb/lp0`);
    const closed = new Promise<void>((resolve) => transport.link.events.once('close', () => resolve()));
    await tree.unplug(0);
    const before = line!;
    before.drop(); // the cable is pulled: the node's other end hangs up
    await closed;
    expect(transport.link.isOpen).toBe(false);
    await expect(driver.status()).rejects.toThrow(/no usblp device .* has serial number/);
    // Plugged in again, it enumerates as lp3 on another port; lp0 no longer exists.
    await expect.poll(() => line !== before && !line!.closed).toBe(true);
    await tree.plug({ serialNumber: SERIAL }, 3, sim.path!, 7);
    expect(await driver.status()).toMatchObject({ ready: true });
    expect(transport.link.device).toBe(`${tree.devRoot}/usb/lp3`);
    const { payload } = await renderLabel(claimsFor('9102'), {
      language: 'zpl',
      dpi: 203,
      rfid: false,
      template: {},
    });
    expect((await driver.send(payload)).reference).toBe(`usb:${SERIAL} via ${tree.devRoot}/usb/lp3`);
    await driver.awaitCompletion({ timeoutMs: 15_000 });
    expect(sim.labels).toHaveLength(1);
  });

  it('says plainly when no usblp device has the serial number', async () => {
    await tree.unplug(0);
    const err = await driver.status().catch((e: unknown) => e);
    expect(isAgentError(err, 'TRANSPORT_ERROR')).toBe(true);
    expect((err as Error).message).toBe(
      `no usblp device in ${tree.sysfsRoot}/class/usbmisc has serial number ${SERIAL}`,
    );
  });

  it('in auto mode without the printer in sysfs, names both ways it looked when libusb does not load', async () => {
    await tree.unplug(0);
    const auto = new UsbTransport({
      serialNumber: SERIAL,
      sysfsRoot: tree.sysfsRoot,
      devRoot: tree.devRoot,
      loadBinding: () =>
        Promise.reject(new Error('the usb package (libusb) did not load: no prebuilt binary')),
    });
    const err = await auto.send(Buffer.from('^XA^XZ')).catch((e: unknown) => e);
    expect(isAgentError(err, 'TRANSPORT_ERROR')).toBe(true);
    expect((err as Error).message).toBe(
      `no usblp device in ${tree.sysfsRoot}/class/usbmisc has serial number ${SERIAL}, and the usb package (libusb) did not load: no prebuilt binary`,
    );
    await auto.close();
  });
});
