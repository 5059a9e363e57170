/**
 * `dpp-agent printers` with USB printers: the configured one asked for its status through the fake usblp
 * tree (the simulator on a pty standing in for /dev/usb/lp0), then every USB printer seen, through usblp and
 * through a fake libusb binding, each with the configured printer it is; a binding that does not load is one
 * line, not a crash.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPrinter, type PrinterHandle } from '@dpp/firmware-sim';
import { FakeUsbBinding, FakeUsbDevice, FakeUsbSysfs, vendorInterface } from '@dpp/testkit/usb';
import { parseAgentConfig } from '../config/index.js';
import { printersCommand } from './printers.js';

let tree: FakeUsbSysfs;
let sim: PrinterHandle;
beforeEach(async () => {
  tree = await FakeUsbSysfs.create();
  sim = await startPrinter({ transport: 'pty' });
});
afterEach(async () => {
  await sim.close();
  await tree.close();
});

const loaded = (printers: unknown[]) => ({
  file: null,
  config: parseAgentConfig({ console: { host: '127.0.0.1', port: 0, enabled: false }, printers } as never),
});

function capture() {
  const lines: string[] = [];
  return { lines, out: { line: (t = '') => lines.push(t), error: (t: string) => lines.push(t) } };
}

describe('dpp-agent printers with USB', () => {
  it('shows the configured USB printer ready, and every USB printer seen with the one it is', async () => {
    await tree.plug({ serialNumber: 'D8N231500123' }, 0, sim.path!);
    await tree.plug(
      { serialNumber: 'XXRQJ2200042', productId: 0x0181, product: 'ZTC ZD621-300dpi ZPL' },
      1,
      '/dev/null',
    );
    const binding = new FakeUsbBinding();
    binding.plug(new FakeUsbDevice({ serialNumber: 'D8N231500123', address: 2 })); // the usblp one again
    binding.plug(new FakeUsbDevice({ serialNumber: '52J194800777', bus: '2-1', address: 7 }));
    binding.plug(new FakeUsbDevice({ serialNumber: 'HANDHELD-1', interfaces: [vendorInterface(0)] }));
    const c = capture();
    const code = await printersCommand(
      loaded([
        {
          name: 'zebra-usb',
          language: 'zpl',
          transport: { type: 'usb', serialNumber: 'D8N231500123', vendorId: '0a5f' },
        },
      ]),
      c.out,
      { sysfsRoot: tree.sysfsRoot, devRoot: tree.devRoot, loadBinding: async () => binding },
    );
    expect(code).toBe(0);
    const text = c.lines.join('\n');
    expect(text).toMatch(/^zebra-usb +zpl +usb +serial D8N231500123 +no +no +no +ready$/m);
    expect(text).toContain('USB printers seen:');
    expect(text).toMatch(
      new RegExp(
        `^  ${tree.devRoot}/usb/lp0 +0a5f:0166 +D8N231500123 +Zebra Technologies +ZTC ZT411-203dpi ZPL +zebra-usb$`,
        'm',
      ),
    );
    expect(text).toMatch(
      /\/usb\/lp1 +0a5f:0181 +XXRQJ2200042 +Zebra Technologies +ZTC ZD621-300dpi ZPL +-$/m,
    );
    expect(text).toMatch(/^ {2}libusb bus 2-1 address 7 +0a5f:0166 +52J194800777 +.* +-$/m);
    expect(text).not.toContain('HANDHELD-1');
    expect(text.match(/D8N231500123/g)).toHaveLength(2); // the table row and one USB line
  });

  it('reports a binding that does not load, or cannot list, in one line', async () => {
    const c = capture();
    expect(
      await printersCommand(loaded([]), c.out, {
        sysfsRoot: tree.sysfsRoot,
        loadBinding: () => Promise.reject(new Error('the usb package (libusb) did not load: no binary')),
      }),
    ).toBe(0);
    expect(c.lines).toEqual([
      'no printers configured',
      '',
      'USB printers seen:',
      '  none',
      '  libusb: the usb package (libusb) did not load: no binary',
    ]);
    const binding = new FakeUsbBinding();
    binding.failWith = '/sys/bus/usb/devices/ not found';
    const d = capture();
    await printersCommand(loaded([]), d.out, { sysfsRoot: tree.sysfsRoot, loadBinding: async () => binding });
    expect(d.lines.at(-1)).toBe('  libusb: cannot list devices: /sys/bus/usb/devices/ not found');
  });
});
