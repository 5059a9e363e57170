/**
 * The simulator driven like the agent will drive it: over a real pty (socat) and over TCP, with the
 * host side written only with `@dpp/shared` (writer and parsers). The same suite runs on both
 * transports. Needs the Debian packages socat and zbar-tools (zbarimg double-checks the PNGs).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  formatHostVerification,
  SCANNER_TRIGGER,
  ZPL_QUERY_ERROR_STATUS,
  ZPL_QUERY_HOST_STATUS,
  ZplLabelBuilder,
  type RfidErrorHandling,
} from '@dpp/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultWrongContent } from './faults/wrong-content.js';
import { startPrinter, type PrinterHandle, type StartPrinterOptions } from './printer/start-printer.js';
import type { PrinterEvents } from './printer/types.js';
import { startScanner } from './scanner/start-scanner.js';
import { openHostLink, type HostLink } from './testing/host-link.js';

const run = promisify(execFile);
const URL = 'https://id.example.com/01/09506000134352/21/2';
const EPC = '30764433400D1EC000000002';
const BLANK = '0'.repeat(24);

/** The label the agent prints: a GS1 Digital Link QR, a text line, the EPC written and read back. */
function label(o: { url?: string; epc?: string; tries?: number; onError?: RfidErrorHandling } = {}): string {
  return new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
    .rfidSetup({ tries: o.tries ?? 3, onError: o.onError ?? 'E' })
    .qr(20, 20, o.url ?? URL, { magnification: 5 })
    .text(20, 330, 'SN 2, lot 7', { height: 30 })
    .writeEpc(o.epc ?? EPC)
    .readBackEpc()
    .toString();
}

/** zbarimg, an independent decoder, on a printed PNG: the data, or null when it finds no symbol. */
async function zbar(pngPath: string): Promise<string | null> {
  try {
    const { stdout } = await run('zbarimg', ['--raw', '-q', pngPath]);
    return stdout.trim();
  } catch (err) {
    if ((err as { code?: number }).code === 4) return null;
    throw err;
  }
}

function nextEvent<K extends keyof PrinterEvents>(
  printer: PrinterHandle,
  event: K,
  timeoutMs = 5000,
): Promise<PrinterEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${String(event)} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    printer.events.once(event, (...args) => {
      clearTimeout(timer);
      resolve(args);
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  printer: PrinterHandle;
  host: HostLink;
  scan: HostLink;
  reconnect(): Promise<HostLink>;
}

async function rig(transport: 'pty' | 'tcp', options: Partial<StartPrinterOptions> = {}): Promise<Rig> {
  const printer = await startPrinter({ transport, ...options });
  cleanups.push(() => printer.close());
  const scanner = await startScanner({ printer, transport: 'pty' });
  cleanups.push(() => scanner.close());
  const connect = async (): Promise<HostLink> => {
    const link = await openHostLink(
      transport === 'pty' ? { path: printer.path ?? '' } : { port: printer.port ?? 0 },
    );
    cleanups.push(() => link.close());
    return link;
  };
  const scan = await openHostLink({ path: scanner.path ?? '' });
  cleanups.push(() => scan.close());
  return { printer, host: await connect(), scan, reconnect: connect };
}

async function scanLabel(scan: HostLink): Promise<[string, string]> {
  await scan.write(SCANNER_TRIGGER);
  const symbol = await scan.nextScan();
  const tag = await scan.nextScan();
  return [
    symbol.kind === 'symbol' ? `${symbol.aimId}${symbol.data}` : symbol.kind,
    tag.kind === 'epc' ? `EPC:${tag.epc}` : tag.kind,
  ];
}

/** Control characters made visible, so the frame shapes read like the guide's `<STX>...<ETX>`. */
const visible = (raw: string): string =>
  raw.replaceAll('\x02', '<STX>').replaceAll('\x03', '<ETX>').replaceAll('\r\n', '<CR><LF>');

const HS_FRAMES =
  /^<STX>\d{3},[01],[01],\d{4},\d{3},[01],[01],[01],000,[01],[01],[01]<ETX><CR><LF><STX>\d{3},0,[01],[01],[01],[0-9A-Z],\w,[01],\d{8},1,\d{3}<ETX><CR><LF><STX>\d{4},[01]<ETX><CR><LF>$/;

describe.each(['pty', 'tcp'] as const)('firmware-sim over %s', (transport) => {
  it('answers ~HS with the three framed strings and ~HQES with the PRINTER STATUS block', async () => {
    const { host } = await rig(transport);
    const hs = await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus');
    expect(visible(hs.raw)).toMatch(HS_FRAMES);
    expect(hs.status).toMatchObject({
      ready: true,
      paperOut: false,
      paused: false,
      headOpen: false,
      formatsInBuffer: 0,
    });
    expect(hs.hostStatus.labelLengthDots).toBe(1218);
    const es = await host.query(ZPL_QUERY_ERROR_STATUS, 'errorStatus');
    expect(visible(es.raw)).toMatch(
      /^<STX><CR><LF> *PRINTER STATUS<CR><LF> *ERRORS: +0 00000000 00000000<CR><LF> *WARNINGS: +0 00000000 00000000<CR><LF><ETX>$/,
    );
    expect(es.status.ready).toBe(true);
  });

  it('prints a label with a QR and an EPC, renders it, and scans back what was sent', async () => {
    const { printer, host, scan } = await rig(transport);
    await host.write(label());
    const hv = await host.nextResponse('hostVerification');
    expect(hv.raw).toBe(formatHostVerification(EPC));
    const [printed] = await printer.waitForLabels(1);
    expect(printed).toMatchObject({
      index: 1,
      formatIndex: 1,
      void: false,
      epc: EPC,
      epcRequested: EPC,
      content: URL,
    });
    expect(printed?.png.subarray(1, 4).toString()).toBe('PNG');
    expect(await zbar(printed?.pngPath ?? '')).toBe(URL);
    expect(await scanLabel(scan)).toEqual([`]Q1${URL}`, `EPC:${EPC}`]);
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status).toMatchObject({
      ready: true,
      formatsInBuffer: 0,
    });
  });

  it('prints UTF-8 text under ^CI28: the label reads as sent, ^FH escapes decoded', async () => {
    const { printer, host } = await rig(transport);
    const text = 'Chaise Élégante ^ ~ _ Łódź';
    const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 240, utf8: true })
      .qr(20, 20, URL, { magnification: 3 })
      .text(150, 20, text, { height: 24 })
      .toString();
    await host.write(Buffer.from(zpl, 'utf8'));
    const [printed] = await printer.waitForLabels(1);
    expect(printed?.texts).toEqual([text]);
    expect(printed?.content).toBe(URL);
    expect(await zbar(printed?.pngPath ?? '')).toBe(URL);
  });

  it.each([
    ['paperOut', { paperOut: true }, 'mediaOut'],
    ['ribbonOut', { ribbonOut: true }, 'ribbonOut'],
    ['headOpen', { headOpen: true }, 'headOpen'],
  ] as const)(
    '%s: still answers status, holds the format, prints once cleared',
    async (fault, flags, hqesName) => {
      const { printer, host, scan } = await rig(transport);
      printer.faults.set(fault, true);
      const received = nextEvent(printer, 'formatReceived');
      await host.write(label());
      await received;
      const hs = await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus');
      expect(hs.status).toMatchObject({ ready: false, ...flags, formatsInBuffer: 1 });
      const es = await host.query(ZPL_QUERY_ERROR_STATUS, 'errorStatus');
      expect(es.errorStatus.errorNames).toEqual([hqesName]);
      expect(es.errorStatus.errors.flag).toBe(true);
      await sleep(300);
      expect(printer.labels).toHaveLength(0);
      printer.faults.set(fault, false);
      await printer.waitForLabels(1);
      expect((await host.nextResponse('hostVerification')).data).toBe(EPC);
      expect(await scanLabel(scan)).toEqual([`]Q1${URL}`, `EPC:${EPC}`]);
    },
  );

  it('paused (~PP): holds formats and counts them in ~HS, prints them on ~PS', async () => {
    const { printer, host } = await rig(transport);
    await host.write('~PP');
    const second = new Promise<void>((resolve) => {
      const off = printer.events.on(
        'formatReceived',
        ({ formatIndex }) => formatIndex === 2 && (off(), resolve()),
      );
    });
    await host.write(label({ url: `${URL}1` }) + label({ url: `${URL}2` }));
    await second;
    const hs = await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus');
    expect(hs.status).toMatchObject({ paused: true, ready: false, formatsInBuffer: 2, partialFormat: false });
    expect(hs.hostStatus.labelsRemaining).toBe(2);
    expect(printer.labels).toHaveLength(0);
    await host.write('~PS');
    const labels = await printer.waitForLabels(2);
    expect(labels.map((l) => l.content)).toEqual([`${URL}1`, `${URL}2`]);
  });

  it('void tag with ^RS error handling E: VOID on every try, blank read-back, error mode holds the format', async () => {
    const { printer, host, scan } = await rig(transport);
    printer.faults.scriptNext('voidTag');
    const rfidError = nextEvent(printer, 'rfidError');
    await host.write(label({ tries: 3, onError: 'E' }));
    const answers = [
      await host.nextResponse('hostVerification'),
      await host.nextResponse('hostVerification'),
      await host.nextResponse('hostVerification'),
    ];
    expect(answers.map((a) => a.data)).toEqual([BLANK, BLANK, BLANK]);
    expect(await rfidError).toEqual([{ formatIndex: 1, onError: 'E' }]);
    expect(printer.labels.map((l) => [l.attempt, l.void, l.epc])).toEqual([
      [1, true, BLANK],
      [2, true, BLANK],
      [3, true, BLANK],
    ]);
    expect(printer.labels[2]?.printedZpl).toContain('^FDVOID^FS');
    expect(await scanLabel(scan)).toEqual(['noRead', `EPC:${BLANK}`]);
    const hs = await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus');
    expect(hs.status).toMatchObject({ ready: false, paused: true, formatsInBuffer: 1 });
    printer.resume();
    expect((await host.nextResponse('hostVerification')).data).toBe(EPC);
    const fourth = (await printer.waitForLabels(4))[3];
    expect(fourth).toMatchObject({ formatIndex: 1, void: false, epc: EPC });
    expect(await scanLabel(scan)).toEqual([`]Q1${URL}`, `EPC:${EPC}`]);
  });

  it('void tag with ^RS error handling P pauses; ~PS tries again', async () => {
    const { printer, host } = await rig(transport);
    printer.faults.scriptNext('voidTag');
    const rfidError = nextEvent(printer, 'rfidError');
    await host.write(label({ tries: 1, onError: 'P' }));
    expect((await host.nextResponse('hostVerification')).data).toBe(BLANK);
    expect(await rfidError).toEqual([{ formatIndex: 1, onError: 'P' }]);
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status).toMatchObject({
      paused: true,
      formatsInBuffer: 1,
    });
    await host.write('~PS');
    expect((await host.nextResponse('hostVerification')).data).toBe(EPC);
    expect(printer.labels.map((l) => l.void)).toEqual([true, false]);
  });

  it('void tag with ^RS error handling N drops the format silently and moves on', async () => {
    const { printer, host } = await rig(transport);
    printer.faults.scriptNext('voidTag');
    const dropped = nextEvent(printer, 'formatDropped');
    await host.write(label({ tries: 2, onError: 'N' }) + label({ url: `${URL}9` }));
    expect((await dropped)[0]).toMatchObject({ formatIndex: 1 });
    const datas = [
      await host.nextResponse('hostVerification'),
      await host.nextResponse('hostVerification'),
      await host.nextResponse('hostVerification'),
    ];
    expect(datas.map((d) => d.data)).toEqual([BLANK, BLANK, EPC]);
    const labels = await printer.waitForLabels(3);
    expect(labels.map((l) => [l.formatIndex, l.void])).toEqual([
      [1, true],
      [1, true],
      [2, false],
    ]);
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status).toMatchObject({
      ready: true,
      formatsInBuffer: 0,
    });
  });

  it('smudged label: the scanner reports NOREAD, the tag still reads', async () => {
    const { printer, host, scan } = await rig(transport);
    printer.faults.scriptLabel(1, 'smudged');
    await host.write(label());
    const [printed] = await printer.waitForLabels(1);
    expect(await zbar(printed?.pngPath ?? '')).toBeNull();
    expect(await scanLabel(scan)).toEqual(['noRead', `EPC:${EPC}`]);
  });

  it('wrong content: the printed QR encodes something else', async () => {
    const { printer, host, scan } = await rig(transport);
    printer.faults.scriptNext('wrongContent');
    await host.write(label());
    const [printed] = await printer.waitForLabels(1);
    const wrong = defaultWrongContent(URL);
    expect(wrong).not.toBe(URL);
    expect(printed?.content).toBe(wrong);
    expect(await scanLabel(scan)).toEqual([`]Q1${wrong}`, `EPC:${EPC}`]);
  });

  it('disconnect mid-job: the line drops after part of the format; nothing prints; the host can reconnect', async () => {
    const { printer, host, reconnect, scan } = await rig(transport);
    printer.faults.scriptNext('disconnect');
    const dropped = nextEvent(printer, 'formatDropped');
    await host.write(label());
    await host.closed;
    expect((await dropped)[0]).toEqual({ formatIndex: 1, reason: 'line dropped mid-job' });
    expect(printer.labels).toHaveLength(0);
    let again: HostLink | undefined;
    for (let i = 0; i < 50 && !again; i++) {
      again = await reconnect().catch(async () => {
        await sleep(100);
        return undefined;
      });
    }
    if (!again) throw new Error('could not reconnect');
    expect((await again.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status.ready).toBe(true);
    await again.write(label());
    expect((await again.nextResponse('hostVerification')).data).toBe(EPC);
    expect((await printer.waitForLabels(1))[0]?.formatIndex).toBe(2);
    expect(await scanLabel(scan)).toEqual([`]Q1${URL}`, `EPC:${EPC}`]);
    // Restarting socat and reopening the pty is slow on a loaded CI machine; the steps above are bounded.
  }, 60_000);

  it('slow line: paces both directions at the baud rate (10 bits a byte)', async () => {
    // A clock that moves only when the line waits: the pacing is read off it, not off the wall.
    const clock = {
      t: 0,
      now: () => clock.t,
      sleep: async (ms: number) => void (clock.t += Math.max(0, ms)),
    };
    const { printer, host } = await rig(transport, { clock });
    printer.faults.setBaudRate(9600);
    const zpl = label();
    const answer = await host.query(zpl + ZPL_QUERY_HOST_STATUS, 'hostStatus', 10_000);
    // Both directions wait their bytes' time on the line: the format and ~HS in, the answer out (its last slice
    // may still be on its way when the frame's end was read).
    const bytes = Buffer.byteLength(zpl) + 3 + answer.raw.length;
    await expect
      .poll(() => clock.t, { timeout: 5000 })
      .toBeGreaterThanOrEqual(((bytes * 10) / 9600) * 1000 - 1e-6);
    expect(answer.status.formatsInBuffer).toBeGreaterThanOrEqual(0);
  });

  it('reads commands split into tiny chunks with noise between them', async () => {
    const { printer, host } = await rig(transport);
    const stream = `\x00\xffnoise${label()}\r\njunk~HS${label({ url: `${URL}7` })}`;
    for (let i = 0; i < stream.length;) {
      const n = 1 + ((i * 7) % 5);
      await host.write(stream.slice(i, i + n));
      i += n;
    }
    expect((await host.nextResponse('hostStatus')).status.ready).toBe(true);
    const labels = await printer.waitForLabels(2);
    expect(labels.map((l) => l.content)).toEqual([URL, `${URL}7`]);
  });
});

describe('firmware-sim with hostStatusWhenFaulted: silent', () => {
  it('does not answer ~HS while the head is open but still answers ~HQES', async () => {
    const { printer, host } = await rig('tcp', { hostStatusWhenFaulted: 'silent' });
    printer.faults.set('headOpen', true);
    await expect(host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus', 500)).rejects.toThrow(/no hostStatus/);
    expect((await host.query(ZPL_QUERY_ERROR_STATUS, 'errorStatus')).status.headOpen).toBe(true);
    printer.faults.set('headOpen', false);
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status.ready).toBe(true);
  });
});

describe('firmware-sim scanner with autoReport', () => {
  it('reports each label as it is printed, without a trigger', async () => {
    const printer = await startPrinter({ transport: 'tcp' });
    cleanups.push(() => printer.close());
    const scanner = await startScanner({ printer, transport: 'pty', autoReport: true, baudRate: 9600 });
    cleanups.push(() => scanner.close());
    const scan = await openHostLink({ path: scanner.path ?? '' });
    cleanups.push(() => scan.close());
    const host = await openHostLink({ port: printer.port ?? 0 });
    cleanups.push(() => host.close());
    await host.write(label() + label({ url: `${URL}5`, epc: '30764433400D1EC000000005' }));
    expect([
      await scan.nextScan(),
      await scan.nextScan(),
      await scan.nextScan(),
      await scan.nextScan(),
    ]).toEqual([
      { kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: URL },
      { kind: 'epc', epc: EPC },
      { kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: `${URL}5` },
      { kind: 'epc', epc: '30764433400D1EC000000005' },
    ]);
    expect(scanner.reads.map((r) => r.labelIndex)).toEqual([1, 2]);
  });
});
