/**
 * Every printed carrier end to end on the simulator: the agent renders and proves a label, the ZPL driver
 * sends it to the simulated printer over a real pty (status first, the EPC read back), the simulated scanner
 * over another pty decodes every symbol of the printed label, and the scan check compares each one with the
 * job: QR with a DataMatrix carrying the Digital Link, a GS1 DataMatrix with the element string, a GS1-128,
 * and a label with all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RenderManifestSchema,
  ScanResultSchema,
  buildDigitalLink,
  envelopeEpc,
  type AidcEnvelopeClaims,
  type LabelTemplate,
} from '@dpp/shared';
import { startPrinter, startScanner, type PrinterHandle, type ScannerHandle } from '@dpp/firmware-sim';
import { claimsFor } from '@dpp/testkit/agent';
import { ZplPrinter } from '../printers/index.js';
import { jobCarriers, renderLabel } from '../render/index.js';
import { LineScanner } from '../scanners/index.js';
import { LineTransport, SerialLink } from '../transports/index.js';
import { checkScan } from './scan-step.js';

const zebra = { language: 'zpl' as const, dpi: 203 as const, rfid: true, template: {} };
const logistics = { widthMm: 100, heightMm: 60 };

function claimsWith(serial: string, template: Partial<LabelTemplate>, rfid = true): AidcEnvelopeClaims {
  const base = claimsFor(/^\d+$/.test(serial) ? serial : '1');
  return {
    ...base,
    serial,
    digital_link: buildDigitalLink('https://id.example.com', base.gtin, serial),
    ...(rfid ? {} : { sgtin96_epc: null }),
    label_template: { ...base.label_template, rfid, ...template },
  };
}

describe('printed carriers on the simulator (printer and scanner on ptys)', () => {
  let sim: PrinterHandle;
  let simScanner: ScannerHandle;
  let printer: ZplPrinter;
  let scanner: LineScanner;

  beforeAll(async () => {
    sim = await startPrinter({ transport: 'pty', rfid: true });
    simScanner = await startScanner({ printer: sim, transport: 'pty' });
    printer = new ZplPrinter({
      name: 'zebra-1',
      transport: new LineTransport('serial', new SerialLink({ path: sim.path!, baudRate: 115200 })),
      statusTimeoutMs: 1000,
    });
    scanner = new LineScanner({
      name: 'scan-1',
      link: new SerialLink({ path: simScanner.path!, baudRate: 115200 }),
    });
  });
  afterAll(async () => {
    await scanner?.close();
    await printer?.close();
    await simScanner?.close();
    await sim?.close();
  });

  /** Renders, prints and scans one label as the job pipeline does, and returns its evidence. */
  async function printAndScan(claims: AidcEnvelopeClaims) {
    const r = await renderLabel(claims, zebra);
    expect((await printer.status()).ready).toBe(true);
    await printer.send(r.payload);
    const done = await printer.awaitCompletion({
      expectedEpc: r.rfid ? envelopeEpc(claims).hex : undefined,
      timeoutMs: 20_000,
    });
    expect(done.evidence).toBe('printer');
    const read = await scanner.scan({ timeoutMs: 10_000 });
    const expected = jobCarriers(claims, r.template);
    const scan = checkScan(read, {
      scanner: 'scan-1',
      claims,
      rfid: r.rfid,
      expected,
      config: undefined,
      at: new Date(),
    });
    return {
      manifest: RenderManifestSchema.parse(r.manifest),
      scan: ScanResultSchema.parse(scan),
      expected,
      read,
    };
  }

  it('QR and a DataMatrix with the Digital Link, with the RFID tag', async () => {
    const claims = claimsWith('9101', { dataMatrix: 'digital-link' });
    const { manifest, scan, expected } = await printAndScan(claims);
    expect(expected.map((c) => c.type)).toEqual(['qr', 'datamatrix', 'rfid']);
    expect(manifest.carriers).toEqual(expected);
    expect(scan.carriers).toEqual(expected.filter((c) => c.type !== 'rfid'));
    expect(scan).toMatchObject({ linkMatches: true, epcRead: claims.sgtin96_epc, epcMatches: true });
  });

  it('a GS1 DataMatrix with the element string of an alphanumeric serial', async () => {
    const claims = claimsWith('AB(7)-x_9', { dataMatrix: 'element-string' }, false);
    const { scan, read } = await printAndScan(claims);
    const hri = `(01)${claims.gtin}(21)AB(7)-x_9`;
    expect(read.symbols?.map((s) => s.aimId)).toEqual([']Q1', ']d2']);
    expect(scan.carriers).toEqual([
      { type: 'qr', data: claims.digital_link },
      { type: 'datamatrix', content: 'element-string', data: hri },
    ]);
  });

  it('a GS1-128 on a logistics label', async () => {
    const claims = claimsWith('LOT>12', { ...logistics, gs1128: true }, false);
    const { scan, read } = await printAndScan(claims);
    expect(read.symbols?.map((s) => s.aimId)).toEqual([']Q1', ']C1']);
    expect(scan.carriers).toEqual([
      { type: 'qr', data: claims.digital_link },
      { type: 'gs1-128', data: `(01)${claims.gtin}(21)LOT>12` },
    ]);
  });

  it('a label with every printed carrier and its RFID tag', async () => {
    const claims = claimsWith('9102', { ...logistics, dataMatrix: 'element-string', gs1128: true });
    const { manifest, scan, expected } = await printAndScan(claims);
    expect(expected.map((c) => c.type)).toEqual(['qr', 'datamatrix', 'gs1-128', 'rfid']);
    expect(manifest.carriers).toEqual(expected);
    expect(scan.carriers).toEqual(expected.filter((c) => c.type !== 'rfid'));
    expect(scan.epcMatches).toBe(true);
  });

  it('fails the scan of a label whose DataMatrix is smudged, or missing from what the job expects', async () => {
    const claims = claimsWith('9103', { ...logistics, dataMatrix: 'digital-link', gs1128: true });
    const r = await renderLabel(claims, zebra);
    sim.faults.scriptNext('smudged');
    await printer.send(r.payload);
    await printer.awaitCompletion({ expectedEpc: envelopeEpc(claims).hex, timeoutMs: 20_000 });
    const read = await scanner.scan({ timeoutMs: 10_000 });
    const o = { scanner: 'scan-1', claims, rfid: true, config: undefined, at: new Date() };
    expect(() => checkScan(read, { ...o, expected: jobCarriers(claims, r.template) })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ reason: 'scan_noread' }) }),
    );
    // A label printed without its DataMatrix, checked against a job that has one.
    const plain = claimsWith('9104', {});
    const printed = await renderLabel(plain, zebra);
    await printer.send(printed.payload);
    await printer.awaitCompletion({ expectedEpc: envelopeEpc(plain).hex, timeoutMs: 20_000 });
    const wanted = { ...printed.template, dataMatrix: 'digital-link' as const };
    const second = await scanner.scan({ timeoutMs: 10_000 });
    expect(() => checkScan(second, { ...o, claims: plain, expected: jobCarriers(plain, wanted) })).toThrow(
      /no datamatrix/,
    );
  });
});
