/**
 * The scan: the printed label read back by the printer's scanner (with its retries), or at the console by a
 * person when the printer has none, and compared with the job: the Digital Link, every other symbol the
 * template puts on the label (DataMatrix, GS1-128, GS1 data compared in its human-readable form), and the
 * EPC on RFID.
 */
import {
  SYMBOL_CARRIERS,
  envelopeEpc,
  type AidcEnvelopeClaims,
  type LabelCarrier,
  type ScanResult,
} from '@dpp/shared';
import type { PrinterConfig } from '../config/index.js';
import { jobCarriers, symbolCarrier, type RenderedLabel } from '../render/index.js';
import type { ScanRead } from '../scanners/index.js';
import { jobFailure } from './failures.js';
import type { ManualScan } from './human-gate.js';
import type { RunContext } from './run-context.js';

export async function scanLabel(
  run: RunContext,
  claims: AidcEnvelopeClaims,
  rendered: RenderedLabel,
): Promise<ScanResult> {
  const d = run.deps;
  const config = d.printerConfig.scanner;
  const expected = jobCarriers(claims, rendered.template);
  let { read, scanner } = d.scanner && config ? await scannerRead(run, expected) : await consoleRead(run);
  if (
    read.symbol !== claims.digital_link &&
    ((read.symbol !== null && d.lane.sentLaterThan(run.ticket, read.symbol)) ||
      d.lane.coveredBeforeRead(run.attemptId))
  ) {
    // The scanner over the exit sees a later label, or another label (a VOID one too) came out over this one
    // before it was read: this one has moved on unread. Not a mismatch nor a NOREAD: a person scans it at the
    // console (the label is out; it is never printed again for this).
    run.log.warn('the label moved on unread (another came out over it); asking for a scan at the console');
    ({ read, scanner } = await consoleRead(run));
  }
  return checkScan(read, { scanner, claims, rfid: rendered.rfid, expected, config, at: new Date(d.now()) });
}

/**
 * The printer says the label is out: the scanner over the exit reads it at once, while the agent still asks
 * the printer's status and reports the print (the next label may come out over it a label's time later).
 * `scanLabel` takes this read as its first. Only where the device attests its own prints: a supervisor's
 * attestation comes before the scan.
 */
export function readWhenOut(run: RunContext): void {
  const d = run.deps;
  if (!d.scanner || !d.printerConfig.scanner || d.printerConfig.attestation !== 'auto') return;
  if (run.firstRead) return;
  run.firstRead = readOnce(run);
  run.firstRead.catch(() => undefined); // awaited by scanLabel, or dropped with the run
}

/**
 * One read by the printer's scanner; the first one of a label tells the lane how long a scan takes (not when
 * the run was aborted meanwhile: that read was cut short, not measured).
 */
function readOnce(run: RunContext): Promise<ScanRead> {
  const config = run.deps.printerConfig.scanner!;
  return run
    .timed('device', () => run.deps.scanner!.scan({ timeoutMs: config.timeoutMs, signal: run.signal }))
    .finally(() => run.signal.aborted || run.deps.lane.scannerRead(run.attemptId));
}

async function scannerRead(
  run: RunContext,
  expected: LabelCarrier[],
): Promise<{ read: ScanRead; scanner: string }> {
  const scanner = run.deps.scanner!;
  const config = run.deps.printerConfig.scanner!;
  run.setStep('scanning');
  const once = () => readOnce(run);
  let read = await (run.firstRead ?? once());
  run.firstRead = null;
  // Read again while a symbol of the label is missing (NOREAD, or a DataMatrix the scanner did not get).
  const incomplete = (r: ScanRead) =>
    r.symbol === null || missingSymbols(symbolCarriers(r), expected).length > 0;
  for (let i = 0; incomplete(read) && i < config.retries; i++) read = await once();
  return { read, scanner: scanner.name };
}

async function consoleRead(run: RunContext): Promise<{ read: ScanRead; scanner: string }> {
  const d = run.deps;
  run.setStep('awaiting_scan');
  let manual: ManualScan | null = null;
  while (!manual) {
    // The label is out: an unanswered wait is asked again, never turned into a FAILED (and a re-print).
    manual = await run.timed('human', () =>
      d.humans.waitScan(run.jobRef, d.jobs.humanTimeoutMs, run.signal).catch((err: unknown) => {
        if (run.signal.aborted) throw err;
        run.log.warn('still waiting for a scan at the console');
        return null;
      }),
    );
  }
  const symbols = manual.symbols ? [{ aimId: ']Q1', data: manual.data }, ...manual.symbols] : undefined;
  return {
    read: { symbol: manual.data, ...(symbols ? { symbols } : {}), epc: manual.epc },
    scanner: 'console',
  };
}

/** The scan result of a read, or the failure that says how the label differs from the job. */
export function checkScan(
  read: ScanRead,
  o: {
    scanner: string;
    claims: AidcEnvelopeClaims;
    rfid: boolean;
    /** The carriers the label must hold (`jobCarriers`); only the QR when absent. */
    expected?: LabelCarrier[];
    config: PrinterConfig['scanner'];
    at: Date;
  },
): ScanResult {
  const { claims } = o;
  if (read.symbol === null) throw jobFailure('scan_noread', 'the scanner decoded no QR on the label');
  if (read.symbol !== claims.digital_link)
    throw jobFailure(
      'scan_mismatch',
      `the label carries ${read.symbol.slice(0, 300)}, not the job Digital Link`,
    );
  const decoded = symbolCarriers(read);
  for (const want of o.expected ?? []) {
    if (want.type === 'qr' || !SYMBOL_CARRIERS.some((t) => t === want.type)) continue;
    const got = decoded.filter((c) => c.type === want.type);
    if (got.length === 0) throw jobFailure('scan_mismatch', `the scanner read no ${want.type} on the label`);
    if (!got.some((c) => sameCarrier(c, want))) {
      const data = 'data' in got[0]! ? got[0].data : '';
      throw jobFailure(
        'scan_mismatch',
        `the label's ${want.type} carries ${data.slice(0, 300)}, not the job's`,
      );
    }
  }
  const result: ScanResult = {
    scanner: o.scanner.slice(0, 64),
    decodedLink: read.symbol,
    linkMatches: true,
    carriers: decoded.slice(0, 8),
    scannedAt: o.at.toISOString(),
  };
  if (!o.rfid) return result;
  if (read.epc) {
    const epc = read.epc.toUpperCase();
    const want = envelopeEpc(claims).hex;
    if (epc !== want) throw jobFailure('scan_epc_mismatch', `the tag reads ${epc}, not ${want}`);
    return { ...result, epcRead: epc, epcMatches: true };
  }
  if (read.epc === null && o.config?.readsRfid) throw jobFailure('scan_notag', 'no tag answered the scanner');
  return result;
}

/** The carriers among the symbols of a read (the QR alone for a read that names no symbols). */
function symbolCarriers(read: ScanRead): LabelCarrier[] {
  if (!read.symbols) return read.symbol === null ? [] : [{ type: 'qr', data: read.symbol }];
  return read.symbols.flatMap((s) => symbolCarrier(s) ?? []);
}

function missingSymbols(decoded: LabelCarrier[], expected: LabelCarrier[]): LabelCarrier[] {
  return expected.filter(
    (c) => SYMBOL_CARRIERS.some((t) => t === c.type) && !decoded.some((d) => d.type === c.type),
  );
}

function sameCarrier(a: LabelCarrier, b: LabelCarrier): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
