/**
 * The tags beyond an SGTIN-96, driven over TCP with the host side written only with `@dpp/shared`: an
 * SGTIN-198 written with its PC word and read back whole, by `^HV` and by the scanner's `EPC:` line; an NFC
 * tag's NDEF URI record written with `^WT` and read back with `^RT`; the voidNfcTag fault.
 */
import {
  SCANNER_TRIGGER,
  ZplLabelBuilder,
  ndefUriTagData,
  uriOfTagData,
  type ZplResponse,
} from '@dpp/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { startPrinter, type StartPrinterOptions } from './printer/start-printer.js';
import { startScanner } from './scanner/start-scanner.js';
import { openHostLink } from './testing/host-link.js';

const URL = 'https://id.example.com/01/09506000134352/21/A7001-x';
/** urn:epc:tag:sgtin-198:1.9506000.013435.A7001-x as epc-tds encodes it, zero-padded to 13 words. */
const SGTIN198 = '36364433400D1EE0B760C18ADF00000000000000000000000000';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(options: Partial<StartPrinterOptions> = {}) {
  const printer = await startPrinter({ transport: 'tcp', port: 0, ...options });
  cleanups.push(() => printer.close());
  const scanner = await startScanner({ printer, transport: 'pty' });
  cleanups.push(() => scanner.close());
  const host = await openHostLink({ port: printer.port ?? 0 });
  cleanups.push(() => host.close());
  const scan = await openHostLink({ path: scanner.path ?? '' });
  cleanups.push(() => scan.close());
  return { printer, host, scan };
}

function tagLabel(o: { epc?: string; nfc?: boolean; tries?: number }): string {
  const b = new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
    .rfidSetup({ tries: o.tries ?? 1, onError: 'N' })
    .qr(20, 20, URL, { magnification: 5 });
  if (o.epc) b.writeEpc(o.epc).readBackEpc({ epcBytes: o.epc.length / 2 });
  if (o.nfc) {
    const data = ndefUriTagData(URL);
    b.writeNfcTag(data).readBackNfcTag(Math.ceil(data.length / 4));
  }
  return b.toString();
}

const hv = (r: ZplResponse) => (r.kind === 'hostVerification' ? `${r.header}${r.data}` : r.kind);

describe('firmware-sim tags', () => {
  it('writes an SGTIN-198 and answers all 52 digits, to ^HV and on the scanner EPC: line', async () => {
    const { printer, host, scan } = await rig();
    await host.write(tagLabel({ epc: SGTIN198 }));
    expect(hv(await host.nextResponse('hostVerification'))).toBe(`EPC:${SGTIN198}`);
    const [printed] = await printer.waitForLabels(1);
    expect(printed).toMatchObject({ void: false, epc: SGTIN198, epcRequested: SGTIN198 });
    await scan.write(SCANNER_TRIGGER);
    expect(await scan.nextScan()).toMatchObject({ kind: 'symbol', data: URL });
    expect(await scan.nextScan()).toEqual({ kind: 'epc', epc: SGTIN198 });
  });

  it('writes the NDEF URI record to the NFC tag and answers the pages read, after the EPC', async () => {
    const { printer, host } = await rig({ nfc: true });
    await host.write(tagLabel({ epc: '30764433400D1EC000000002', nfc: true }));
    expect(hv(await host.nextResponse('hostVerification'))).toBe('EPC:30764433400D1EC000000002');
    const nfc = await host.nextResponse('hostVerification');
    expect(nfc.kind === 'hostVerification' && nfc.header).toBe('NFC:');
    const data = nfc.kind === 'hostVerification' ? nfc.data : '';
    expect(uriOfTagData(new Uint8Array(Buffer.from(data, 'hex')))).toBe(URL);
    const [printed] = await printer.waitForLabels(1);
    expect(printed).toMatchObject({ void: false, nfcUri: URL });
    expect(printer.readNfcTag(1)).toBe(URL);
  });

  it('voids a label whose NFC tag refuses the write, and without an NFC encoder ignores ^WT/^RT', async () => {
    const { printer, host } = await rig({ nfc: true });
    printer.faults.scriptNext('voidNfcTag');
    await host.write(tagLabel({ nfc: true, tries: 2 }));
    for (let i = 0; i < 2; i++)
      expect(hv(await host.nextResponse('hostVerification'))).toMatch(/^NFC:0300FE00/);
    const labels = await printer.waitForLabels(2);
    expect(labels.map((l) => [l.void, l.nfcUri])).toEqual([
      [true, null],
      [true, null],
    ]);

    const plain = await rig();
    await plain.host.write(tagLabel({ nfc: true }));
    const [printed] = await plain.printer.waitForLabels(1);
    expect(printed).toMatchObject({ void: false, nfcUri: null });
    expect(plain.printer.readNfcTag(1)).toBeNull();
  });

  it('voids an SGTIN-198 on a roll of 128-bit inlays', async () => {
    const { printer, host } = await rig({ tagEpcBits: 128 });
    await host.write(tagLabel({ epc: SGTIN198 }));
    expect(hv(await host.nextResponse('hostVerification'))).toBe('EPC:');
    const [printed] = await printer.waitForLabels(1);
    expect(printed).toMatchObject({ void: true, epc: '0'.repeat(24), epcRequested: SGTIN198 });
  });
});
