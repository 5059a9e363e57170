/**
 * The ZPL driver writing and reading back the tags beyond an SGTIN-96, against the simulated printer on a
 * real pty (socat) and on raw TCP: an SGTIN-198 (208 bits, its PC word first), an NFC tag with the Digital
 * Link as an NDEF URI record, a label with both, and the void faults that fail a label without printing it
 * twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildDigitalLink, type AidcEnvelopeClaims } from '@dpp/shared';
import { startPrinter, type PrinterHandle, type StartPrinterOptions } from '@dpp/firmware-sim';
import { claimsFor, GTIN } from '@dpp/testkit/agent';
import { isAgentError } from '../errors.js';
import { deviceAttestation } from '../jobs/attestation.js';
import { renderLabel } from '../render/index.js';
import { LineTransport, SerialLink, TcpLink } from '../transports/index.js';
import { ZplPrinter } from './zpl-printer.js';

/**
 * SGTIN-198s of the testkit GTIN (company prefix 0950600, filter 1) with alphanumeric serials, as the `epc-tds`
 * package encodes them (urn:epc:tag:sgtin-198:1.9506000.013435.<serial>), zero-padded to 13 words.
 */
const SGTIN198: Record<string, string> = {
  'A7001-x': '36364433400D1EE0B760C18ADF00000000000000000000000000',
  'A7002-x': '36364433400D1EE0B760C192DF00000000000000000000000000',
  'A7003-x': '36364433400D1EE0B760C19ADF00000000000000000000000000',
};

function claims198(serial: string): AidcEnvelopeClaims {
  const base = claimsFor('1');
  return {
    ...base,
    serial,
    digital_link: buildDigitalLink('https://id.example.com', GTIN, serial),
    sgtin96_epc: null,
    epc: { scheme: 'sgtin-198', hex: SGTIN198[serial]! },
    label_template: { ...base.label_template, textLines: [`SN ${serial}`] },
  };
}

function withTags(claims: AidcEnvelopeClaims, tags: { rfid: boolean; nfc: boolean }): AidcEnvelopeClaims {
  return { ...claims, label_template: { ...claims.label_template, ...tags } };
}

const printer = { language: 'zpl' as const, dpi: 203 as const, rfid: true, nfc: true, template: {} };

describe.each(['pty', 'tcp'] as const)('ZplPrinter tags over %s', (kind) => {
  let sim: PrinterHandle;
  let driver: ZplPrinter;

  let dropped: number[] = [];

  async function start(extra: Partial<StartPrinterOptions> = {}) {
    sim = await startPrinter({ transport: kind, port: 0, nfc: true, ...extra });
    dropped = [];
    sim.events.on('formatDropped', (e) => dropped.push(e.formatIndex));
    const link =
      kind === 'pty'
        ? new SerialLink({ path: sim.path!, baudRate: 115200 })
        : new TcpLink({ host: '127.0.0.1', port: sim.port! });
    driver = new ZplPrinter({
      name: 'zebra-1',
      transport: new LineTransport(kind === 'pty' ? 'serial' : 'tcp', link),
      statusTimeoutMs: 700,
    });
  }

  afterEach(async () => {
    await driver?.close();
    await sim?.close();
  });

  it('writes an SGTIN-198 with its PC word and reads all 208 bits back', async () => {
    await start();
    const claims = claims198('A7001-x');
    const hex = SGTIN198['A7001-x']!;
    const r = await renderLabel(claims, { ...printer, nfc: false });
    expect(r.payload.toString()).toContain(`^RFW,H,1,2,1^FD6800^FS\n^RFW,H,2,26,1^FD${hex}^FS`);
    expect(r.epc).toBe(hex);
    await driver.send(r.payload, 'A7001-x');
    const done = await driver.awaitCompletion({ expectedEpc: hex, timeoutMs: 15_000 });
    expect(done).toMatchObject({ evidence: 'printer', epcReadBack: hex, voidLabels: 0 });
    expect(sim.labels).toHaveLength(1);
    expect(sim.labels[0]).toMatchObject({ void: false, epc: hex, epcRequested: hex });
    expect(sim.readTag(1)).toBe(hex); // what a reader (and the scanner's EPC: line) gets
  });

  it('fails an SGTIN-198 on a roll of 128-bit inlays: three VOID labels, then the held format is dropped', async () => {
    await start({ tagEpcBits: 128 });
    const claims = claims198('A7002-x');
    const r = await renderLabel(claims, { ...printer, nfc: false });
    await driver.send(r.payload, 'A7002-x');
    const err = await driver
      .awaitCompletion({ expectedEpc: r.epc, timeoutMs: 15_000 })
      .catch((e: unknown) => e);
    expect(isAgentError(err, 'RFID_READBACK_MISMATCH')).toBe(true);
    expect((err as { details: { voidLabels: number } }).details.voidLabels).toBe(3);
    await driver.cancelHeld();
    await expect.poll(() => dropped).toEqual([1]);
    sim.resume();
    await new Promise((res) => setTimeout(res, 300));
    expect(sim.labels.map((l) => l.void)).toEqual([true, true, true]);
  });

  it('writes the Digital Link to the NFC tag as an NDEF URI record and reads it back', async () => {
    await start();
    const claims = withTags(claimsFor('7101'), { rfid: false, nfc: true });
    const r = await renderLabel(claims, printer);
    expect(r).toMatchObject({ rfid: false, nfc: true });
    // 03 2D: the NDEF TLV of 45 bytes; D1 01 29 55: one short well-known record, type U, payload 41 bytes;
    // 04: https://; then the 40 bytes of id.example.com/...; FE; padded to 12 blocks of 4 bytes.
    expect(r.payload.toString()).toMatch(
      /\^WT4,0,1,0,1,N\^FD032DD101295504(?:[0-9A-F]{2}){40}FE\^FS\n\^RT2,4,12,1,0,1\^FS\n\^FH_\^HV2,96,NFC:,_0D_0A,L\^FS/,
    );
    await driver.send(r.payload, '7101');
    const done = await driver.awaitCompletion({ expectedNfcUri: claims.digital_link, timeoutMs: 15_000 });
    expect(done).toMatchObject({ evidence: 'printer', nfcReadBack: claims.digital_link, voidLabels: 0 });
    expect(sim.labels[0]).toMatchObject({ void: false, nfcUri: claims.digital_link, epcRequested: null });
    expect(sim.readNfcTag(1)).toBe(claims.digital_link);
    const attestation = deviceAttestation('device-1', done, 'auto', new Date());
    expect(attestation).toMatchObject({ method: 'rfid_readback', nfcReadBack: claims.digital_link });
    expect(attestation).not.toHaveProperty('epcReadBack');
  });

  it('fails a label whose NFC tag will not take the write, and the next label prints on a fresh tag', async () => {
    await start();
    const first = withTags(claimsFor('7102'), { rfid: false, nfc: true });
    const second = withTags(claimsFor('7103'), { rfid: false, nfc: true });
    sim.faults.scriptNext('voidNfcTag');
    const r1 = await renderLabel(first, printer);
    await driver.send(r1.payload, '7102');
    const err = await driver
      .awaitCompletion({ expectedNfcUri: first.digital_link, timeoutMs: 15_000 })
      .catch((e: unknown) => e);
    expect(isAgentError(err, 'NFC_READBACK_MISMATCH')).toBe(true);
    expect((err as { details: unknown }).details).toMatchObject({ readBack: null, voidLabels: 3 });
    await driver.cancelHeld();
    await expect.poll(() => dropped).toEqual([1]);
    sim.resume(); // the operator clears the error
    const r2 = await renderLabel(second, printer);
    await driver.send(r2.payload, '7103');
    const done = await driver.awaitCompletion({ expectedNfcUri: second.digital_link, timeoutMs: 15_000 });
    expect(done).toMatchObject({ nfcReadBack: second.digital_link, voidLabels: 0 });
    await new Promise((res) => setTimeout(res, 300));
    // Three VOID labels of the first (blank tags), then the second once; the first never came out good.
    expect(sim.labels.map((l) => [l.formatIndex, l.void, l.nfcUri])).toEqual([
      [1, true, null],
      [1, true, null],
      [1, true, null],
      [2, false, second.digital_link],
    ]);
  });

  it('writes and reads back both tags of a label with RFID and NFC', async () => {
    await start();
    const claims = withTags(claimsFor('7104'), { rfid: true, nfc: true });
    const r = await renderLabel(claims, printer);
    await driver.send(r.payload, '7104');
    const done = await driver.awaitCompletion({
      expectedEpc: claims.sgtin96_epc!,
      expectedNfcUri: claims.digital_link,
      timeoutMs: 15_000,
    });
    expect(done).toMatchObject({
      epcReadBack: claims.sgtin96_epc!,
      nfcReadBack: claims.digital_link,
      voidLabels: 0,
    });
    expect(sim.labels).toHaveLength(1);
    expect(sim.labels[0]).toMatchObject({ epc: claims.sgtin96_epc!, nfcUri: claims.digital_link });
    expect(deviceAttestation('device-1', done, 'auto', new Date())).toMatchObject({
      method: 'rfid_readback',
      epcReadBack: claims.sgtin96_epc!,
      nfcReadBack: claims.digital_link,
    });
  });

  it('fails a label with both tags when only its NFC tag is void, though its EPC read back right', async () => {
    await start();
    const claims = withTags(claims198('A7003-x'), { rfid: true, nfc: true });
    sim.faults.scriptNext('voidNfcTag');
    const r = await renderLabel(claims, printer);
    await driver.send(r.payload, 'A7003-x');
    const err = await driver
      .awaitCompletion({ expectedEpc: r.epc, expectedNfcUri: claims.digital_link, timeoutMs: 15_000 })
      .catch((e: unknown) => e);
    expect(isAgentError(err, 'NFC_READBACK_MISMATCH')).toBe(true);
    await driver.cancelHeld();
    await expect.poll(() => dropped).toEqual([1]);
    expect(sim.labels.map((l) => [l.void, l.epc])).toEqual([
      [true, r.epc],
      [true, r.epc],
      [true, r.epc],
    ]);
  });

  it('takes an NFC read-back of a label sent later as this one gone unanswered, and keeps it for that label', async () => {
    await start();
    const lost = withTags(claimsFor('7105'), { rfid: false, nfc: true });
    const later = withTags(claimsFor('7106'), { rfid: false, nfc: true });
    const r = await renderLabel(later, printer);
    await driver.send(r.payload, '7106');
    const err = await driver
      .awaitCompletion({
        expectedNfcUri: lost.digital_link,
        sentLaterLink: (uri) => uri === later.digital_link,
        timeoutMs: 15_000,
      })
      .catch((e: unknown) => e);
    expect(isAgentError(err, 'PRINT_TIMEOUT')).toBe(true);
    expect((err as { details: unknown }).details).toEqual({ readBack: later.digital_link });
    const done = await driver.awaitCompletion({ expectedNfcUri: later.digital_link, timeoutMs: 15_000 });
    expect(done).toMatchObject({ nfcReadBack: later.digital_link, voidLabels: 0 });
  });
});
