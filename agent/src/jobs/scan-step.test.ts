import type { AidcEnvelopeClaims, LabelCarrier } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import type { PrinterDriver } from '../printers/index.js';
import type { RenderedLabel } from '../render/index.js';
import type { ScanRead } from '../scanners/index.js';
import { PrintLane, type LaneTicket } from './print-lane.js';
import type { RunContext } from './run-context.js';
import { checkScan, readWhenOut, scanLabel } from './scan-step.js';

const claims = {
  digital_link: 'https://id.example.com/01/09506000134352/21/A1',
  sgtin96_epc: '3034257BF7194E4000000001',
} as AidcEnvelopeClaims;
const at = new Date('2026-11-25T10:00:00Z');
const base = { scanner: 'scanner-1', claims, at, config: undefined };

describe('checkScan', () => {
  it('passes the job Digital Link, and on RFID the job EPC (in any case)', () => {
    expect(checkScan({ symbol: claims.digital_link, epc: undefined }, { ...base, rfid: false })).toEqual({
      scanner: 'scanner-1',
      decodedLink: claims.digital_link,
      linkMatches: true,
      carriers: [{ type: 'qr', data: claims.digital_link }],
      scannedAt: '2026-11-25T10:00:00.000Z',
    });
    expect(
      checkScan(
        { symbol: claims.digital_link, epc: claims.sgtin96_epc!.toLowerCase() },
        { ...base, rfid: true },
      ),
    ).toMatchObject({ epcRead: claims.sgtin96_epc, epcMatches: true });
  });

  it('compares the EPC of either scheme: an SGTIN-198 claim names it in epc', () => {
    const hex = '36364433400D1EE0B760C18ADF00000000000000000000000000';
    const c198 = { ...claims, sgtin96_epc: null, epc: { scheme: 'sgtin-198', hex } } as AidcEnvelopeClaims;
    expect(
      checkScan({ symbol: claims.digital_link, epc: hex }, { ...base, claims: c198, rfid: true }),
    ).toMatchObject({ epcRead: hex, epcMatches: true });
    expect(() =>
      checkScan(
        { symbol: claims.digital_link, epc: `${hex.slice(0, 50)}01` },
        { ...base, claims: c198, rfid: true },
      ),
    ).toThrow(/the tag reads/);
  });

  it('fails a label with no code, another link, another EPC, or no tag where the scanner reads RFID', () => {
    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as { details?: { reason?: string } }).details?.reason;
      }
      return 'passed';
    };
    expect(reason(() => checkScan({ symbol: null, epc: undefined }, { ...base, rfid: false }))).toBe(
      'scan_noread',
    );
    expect(
      reason(() => checkScan({ symbol: 'https://evil.example/', epc: undefined }, { ...base, rfid: false })),
    ).toBe('scan_mismatch');
    expect(
      reason(() =>
        checkScan({ symbol: claims.digital_link, epc: '3034257BF7194E4000000002' }, { ...base, rfid: true }),
      ),
    ).toBe('scan_epc_mismatch');
    const readsRfid = { ...base, rfid: true, config: { readsRfid: true } as never };
    expect(reason(() => checkScan({ symbol: claims.digital_link, epc: null }, readsRfid))).toBe('scan_notag');
    // A scanner that does not read RFID proves the link only.
    expect(reason(() => checkScan({ symbol: claims.digital_link, epc: null }, { ...base, rfid: true }))).toBe(
      'passed',
    );
  });
});

describe('checkScan with symbols beyond the QR', () => {
  const hri = '(01)09506000134352(21)A1';
  const raw = '010950600013435221A1';
  const expected: LabelCarrier[] = [
    { type: 'qr', data: claims.digital_link },
    { type: 'datamatrix', content: 'element-string', data: hri },
    { type: 'gs1-128', data: hri },
  ];
  const o = { ...base, rfid: false, expected };
  const qr = { aimId: ']Q1', data: claims.digital_link };
  const reason = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return (err as Error).message;
    }
    return 'passed';
  };

  it('turns GS1 data into its human-readable form and lists every symbol read', () => {
    const symbols = [qr, { aimId: ']d2', data: raw }, { aimId: ']C1', data: raw }];
    expect(checkScan({ symbol: claims.digital_link, symbols, epc: undefined }, o).carriers).toEqual(expected);
  });

  it('fails a label whose DataMatrix is missing, plain instead of GS1, or carries another serial', () => {
    const bc = { aimId: ']C1', data: raw };
    expect(
      reason(() => checkScan({ symbol: claims.digital_link, symbols: [qr, bc], epc: undefined }, o)),
    ).toMatch(/no datamatrix/);
    const plain = { aimId: ']d1', data: raw };
    expect(
      reason(() => checkScan({ symbol: claims.digital_link, symbols: [qr, plain, bc], epc: undefined }, o)),
    ).toMatch(/datamatrix carries/);
    const other = { aimId: ']d2', data: '010950600013435221A2' };
    expect(
      reason(() => checkScan({ symbol: claims.digital_link, symbols: [qr, other, bc], epc: undefined }, o)),
    ).toMatch(/carries \(01\)09506000134352\(21\)A2, not the job's/);
    // A person at the console reads the QR only: the DataMatrix is not proven.
    expect(reason(() => checkScan({ symbol: claims.digital_link, epc: undefined }, o))).toMatch(
      /no datamatrix/,
    );
  });
});

describe('scanLabel on a printer whose scanner reads the label at the exit', () => {
  /**
   * One label sent and out at 100 ms, its scanner's read answering `read` at 160 ms; with `voidAt`, a VOID label
   * of the next format came out over it first. A person at the console scans `claims`'s label when asked.
   */
  async function scanOf(read: ScanRead, voidAt?: number) {
    let now = 0;
    const lane = new PrintLane({} as PrinterDriver, true, silentLogger, true, () => now);
    const signal = new AbortController().signal;
    const { ticket } = await lane.send<LaneTicket>(
      'a1',
      claims.digital_link,
      undefined,
      true,
      signal,
      async () => {},
      async (t) => t,
    );
    const asked: string[] = [];
    const run = {
      deps: {
        scanner: {
          name: 'scanner-1',
          scan: async () => {
            if (voidAt !== undefined) {
              now = voidAt;
              lane.voidOut();
            }
            now = 160;
            return read;
          },
        },
        printerConfig: { scanner: { timeoutMs: 1000, retries: 0, readsRfid: false }, attestation: 'auto' },
        lane,
        humans: {
          waitScan: async (jobRef: string) => {
            asked.push(jobRef);
            return { data: claims.digital_link };
          },
        },
        jobs: { humanTimeoutMs: 60_000 },
        now: () => now,
      },
      jobRef: 'job_1',
      attemptId: 'a1',
      signal,
      log: silentLogger,
      ticket,
      firstRead: null,
      setStep: () => undefined,
      timed: <T>(_: string, fn: () => Promise<T>) => fn(),
    } as unknown as RunContext;
    now = 100;
    lane.out(ticket);
    readWhenOut(run); // the read starts the moment the label is out
    const rendered = { rfid: false, template: { rfid: false } } as unknown as RenderedLabel;
    const result = await scanLabel(run, claims, rendered).catch((err: { details?: { reason?: string } }) => ({
      failed: err.details?.reason,
    }));
    return { result, asked };
  }

  it('fails a NOREAD of a label nothing came out over', async () => {
    expect(await scanOf({ symbol: null, epc: undefined })).toEqual({
      result: { failed: 'scan_noread' },
      asked: [],
    });
  });

  it('asks a person at the console, never fails, when a VOID label came out over it before its read', async () => {
    const { result, asked } = await scanOf({ symbol: null, epc: undefined }, 130);
    expect(asked).toEqual(['job_1']);
    expect(result).toMatchObject({ scanner: 'console', decodedLink: claims.digital_link, linkMatches: true });
  });

  it('keeps a read of the label itself though another came out over it meanwhile', async () => {
    const { result, asked } = await scanOf({ symbol: claims.digital_link, epc: undefined }, 130);
    expect(asked).toEqual([]);
    expect(result).toMatchObject({ scanner: 'scanner-1', linkMatches: true });
  });
});
