/**
 * `dpp-agent printers`: the configured printers and their status. From the running agent when one answers
 * (it holds the serial lines); otherwise by asking each printer directly. Then the USB printers this machine
 * can see, so a printer's serial number can be read off for its configuration.
 */
import type { LoadedConfig } from '../config/index.js';
import { toAgentError } from '../errors.js';
import { createPrinterDriver, printerStateOf } from '../printers/index.js';
import { UsbTransport } from '../transports/index.js';
import { fetchStatus } from './console-client.js';
import { table, type Output } from './output.js';
import { seenUsbPrinters, usbPrinterLines, type UsbProbe } from './usb-printers.js';

function where(t: LoadedConfig['config']['printers'][number]['transport']): string {
  switch (t.type) {
    case 'serial':
      return `${t.path} @${t.baudRate}`;
    case 'tcp':
      return `${t.host}:${t.port}`;
    case 'usb':
      return `serial ${t.serialNumber}${t.backend === 'auto' ? '' : ` (${t.backend})`}`;
    case 'cups':
      return `queue ${t.queue}`;
    case 'spool':
      return t.dir;
  }
}

export async function printersCommand(
  loaded: LoadedConfig,
  out: Output,
  usb: UsbProbe = {},
): Promise<number> {
  const printers = loaded.config.printers;
  let failed = 0;
  if (printers.length === 0) out.line(`no printers configured${loaded.file ? ` in ${loaded.file}` : ''}`);
  else failed = await configuredPrinters(loaded, out, usb);
  for (const l of usbPrinterLines(await seenUsbPrinters(usb), printers)) out.line(l);
  return failed > 0 ? 1 : 0;
}

/** The configured printers' table; answers how many could not be reached. */
async function configuredPrinters(loaded: LoadedConfig, out: Output, usb: UsbProbe): Promise<number> {
  const printers = loaded.config.printers;
  const running = await fetchStatus(loaded.config);
  const rows: string[][] = [
    ['PRINTER', 'LANG', 'TRANSPORT', 'WHERE', 'RFID', 'NFC', 'SCANNER', 'STATE', 'DETAIL'],
  ];
  let failed = 0;
  for (const p of printers) {
    let state: string;
    let detail = '';
    const view = running?.printers.find((v) => v.name === p.name);
    if (view) {
      state = view.state;
      detail = view.detail ?? '(from the running agent)';
    } else {
      const driver = createPrinterDriver(
        p,
        p.transport.type === 'usb' ? new UsbTransport({ ...p.transport, ...usb }) : undefined,
      );
      try {
        const s = await driver.status();
        state = s ? printerStateOf(s) : 'unknown';
        detail = s ? (s.ready ? '' : s.errors.join(', ')) : 'one-way transport: no status';
      } catch (err) {
        state = 'offline';
        detail = toAgentError(err).message;
        failed++;
      } finally {
        await driver.close().catch(() => undefined);
      }
    }
    rows.push([
      p.name,
      p.language,
      p.transport.type,
      where(p.transport),
      p.rfid ? 'yes' : 'no',
      p.nfc ? 'yes' : 'no',
      p.scanner ? 'yes' : 'no',
      state,
      detail,
    ]);
  }
  for (const l of table(rows)) out.line(l);
  return failed;
}
