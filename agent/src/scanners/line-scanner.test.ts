/** The line scanner against the simulated scanner on a real pty, reading what the simulated printer printed. */
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openHostLink,
  startPrinter,
  startScanner,
  type PrinterHandle,
  type ScannerHandle,
} from '@dpp/firmware-sim';
import type { LabelTemplate } from '@dpp/shared';
import { isAgentError } from '../errors.js';
import { renderLabel } from '../render/index.js';
import { claimsFor } from '@dpp/testkit/agent';
import { SerialLink, TcpLink } from '../transports/index.js';
import { LineScanner } from './line-scanner.js';

describe('LineScanner on a pty', () => {
  let printer: PrinterHandle;
  let sim: ScannerHandle;
  let scanner: LineScanner;

  async function start(rfid = true) {
    printer = await startPrinter({ transport: 'tcp', port: 0, rfid });
    sim = await startScanner({ printer, transport: 'pty' });
    scanner = new LineScanner({
      name: 'scan-1',
      link: new SerialLink({ path: sim.path!, baudRate: 115200 }),
    });
  }
  beforeEach(() => start());
  afterEach(async () => {
    await scanner?.close();
    await sim?.close();
    await printer?.close();
  });

  async function print(serial: string, rfid = true, template: Partial<LabelTemplate> = {}) {
    const base = claimsFor(serial);
    const claims = { ...base, label_template: { ...base.label_template, ...template } };
    const r = await renderLabel(claims, { language: 'zpl', dpi: 203, rfid, template: {} });
    const link = await openHostLink({ port: printer.port! });
    const before = printer.labels.length;
    await link.write(r.payload);
    await printer.waitForLabels(before + 1, 15_000);
    await link.close();
    return claims;
  }

  it('reads the QR and the tag of the last label', async () => {
    const claims = await print('8001');
    expect(await scanner.scan({ timeoutMs: 3000 })).toEqual({
      symbol: claims.digital_link,
      symbols: [{ aimId: ']Q1', data: claims.digital_link }],
      epc: claims.sgtin96_epc,
    });
    const next = await print('8002');
    expect((await scanner.scan({ timeoutMs: 3000 })).symbol).toBe(next.digital_link);
  });

  it('says NOREAD for a smudged label and NOTAG before anything was printed', async () => {
    expect(await scanner.scan({ timeoutMs: 3000 })).toEqual({ symbol: null, symbols: [], epc: null });
    printer.faults.scriptNext('smudged');
    const claims = await print('8003');
    expect(await scanner.scan({ timeoutMs: 3000 })).toEqual({
      symbol: null,
      symbols: [],
      epc: claims.sgtin96_epc,
    });
  });

  it('sends one line per symbol, GS1 data with GS separators, then the tag line', async () => {
    const claims = await print('8005', true, {
      widthMm: 100,
      heightMm: 60,
      dataMatrix: 'element-string',
      gs1128: true,
    });
    const raw = `01${claims.gtin}218005`;
    expect(await scanner.scan({ timeoutMs: 5000 })).toEqual({
      symbol: claims.digital_link,
      symbols: [
        { aimId: ']Q1', data: claims.digital_link },
        { aimId: ']d2', data: raw },
        { aimId: ']C1', data: raw },
      ],
      epc: claims.sgtin96_epc,
    });
    // Smudged: no symbol survives, whichever it is.
    printer.faults.scriptNext('smudged');
    await print('8006', true, { widthMm: 100, heightMm: 60, dataMatrix: 'digital-link', gs1128: true });
    expect((await scanner.scan({ timeoutMs: 5000 })).symbols).toEqual([]);
  });

  it('says NOTAG for a label without RFID', async () => {
    await scanner.close();
    await sim.close();
    await printer.close();
    await start(false);
    const claims = await print('8004', false);
    expect(await scanner.scan({ timeoutMs: 3000 })).toMatchObject({ symbol: claims.digital_link, epc: null });
  });
});

describe('LineScanner timeout', () => {
  it('throws SCANNER_TIMEOUT when the scanner says nothing', async () => {
    const server = net.createServer((s) => s.on('data', () => {}));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const scanner = new LineScanner({ name: 'mute', link: new TcpLink({ host: '127.0.0.1', port }) });
    try {
      await expect(scanner.scan({ timeoutMs: 300 })).rejects.toSatisfy((e) =>
        isAgentError(e, 'SCANNER_TIMEOUT'),
      );
    } finally {
      await scanner.close();
      server.close();
    }
  });
});

describe('LineScanner reads of several symbols', () => {
  it('collects every symbol line up to the tag line, across chunks, and has no QR when none was read', async () => {
    const server = net.createServer((s) =>
      s.on('data', () => {
        s.write(']d2010950600');
        setTimeout(() => s.write('01343522\x1d10L1\r\n]C1x\r'), 20);
        setTimeout(() => s.write('\nNOTAG\r\n'), 60);
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const scanner = new LineScanner({ name: 'multi', link: new TcpLink({ host: '127.0.0.1', port }) });
    try {
      expect(await scanner.scan({ timeoutMs: 2000 })).toEqual({
        symbol: null,
        symbols: [
          { aimId: ']d2', data: '01095060001343522\x1d10L1' },
          { aimId: ']C1', data: 'x' },
        ],
        epc: null,
      });
    } finally {
      await scanner.close();
      server.close();
    }
  });
});
