/**
 * Standalone simulator: `npm run sim -- --printer pty --scanner pty`. Prints one JSON line per
 * device with its path or port, one per format received and per printed label, and answers control commands on stdin
 * (see cli-control.ts). Runs until SIGINT/SIGTERM, then kills socat and frees the ports.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CliUsageError, parseCliArgs, USAGE, type CliOptions } from './cli-args.js';
import { runControlCommand } from './cli-control.js';
import { jsonLineLogger } from './log.js';
import { mechanicalLimit } from './printer/mechanics.js';
import { startPrinter, type PrinterHandle } from './printer/start-printer.js';
import { startScanner, type ScannerHandle } from './scanner/start-scanner.js';

const out = (obj: Record<string, unknown>): void => {
  process.stdout.write(JSON.stringify(obj) + '\n');
};

async function main(options: CliOptions): Promise<void> {
  const log = jsonLineLogger((line) => process.stderr.write(line), options.verbose ? 'debug' : 'info');
  const closers: Array<() => Promise<void>> = [];
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    for (const close of closers.reverse())
      await close().catch((err: unknown) => log.warn('close failed', { err: String(err) }));
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  // One folder for both pty pairs, so printer-host and scanner-host sit side by side.
  const ptyDir = options.ptyDir ?? (await mkdtemp(join(tmpdir(), 'dpp-sim-')));
  if (!options.ptyDir) closers.push(() => rm(ptyDir, { recursive: true, force: true }));
  const printer: PrinterHandle = await startPrinter({
    transport: options.printer,
    port: options.port,
    host: options.host,
    ...(options.baud !== undefined ? { baudRate: options.baud } : {}),
    dpi: options.dpi,
    labelDir: options.labelDir,
    keepLabels: true,
    ptyDir,
    hostStatusWhenFaulted: options.hostStatusWhenFaulted,
    mechanics: options.mechanics,
    nfc: options.nfc,
    ...(options.tagEpcBits !== undefined ? { tagEpcBits: options.tagEpcBits } : {}),
    log,
  });
  closers.push(() => printer.close());
  for (const f of options.faults) printer.faults.set(f, true);
  for (const s of options.scripts) printer.faults.scriptLabel(s.n, s.fault);
  out({
    device: 'printer',
    transport: printer.transport,
    path: printer.path,
    host: printer.host,
    port: printer.port,
    labelDir: printer.labelDir,
    baudRate: printer.faults.baudRate,
    mechanics: options.mechanics,
    labelsPerSecondLimit: options.mechanics ? Number(mechanicalLimit(options.mechanics).toFixed(3)) : null,
  });

  if (options.scanner !== 'none') {
    const scanner: ScannerHandle = await startScanner({
      printer,
      transport: options.scanner,
      port: options.scannerPort,
      host: options.host,
      ...(options.baud !== undefined ? { baudRate: options.baud } : {}),
      ptyDir,
      autoReport: options.scannerAuto,
      log,
    });
    closers.push(() => scanner.close());
    out({
      device: 'scanner',
      transport: scanner.transport,
      path: scanner.path,
      host: scanner.host,
      port: scanner.port,
    });
  }

  printer.events.on('labelPrinted', (l) =>
    out({
      event: 'labelPrinted',
      index: l.index,
      formatIndex: l.formatIndex,
      void: l.void,
      epc: l.epc,
      ...(l.nfcUri !== null ? { nfcUri: l.nfcUri } : {}),
      content: l.content,
      pngPath: l.pngPath,
    }),
  );
  printer.events.on('formatReceived', (d) => out({ event: 'formatReceived', ...d }));
  printer.events.on('formatDropped', (d) => out({ event: 'formatDropped', ...d }));
  printer.events.on('rfidError', (d) => out({ event: 'rfidError', ...d }));

  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const answer = runControlCommand(printer, line);
    if (Object.keys(answer).length > 0) out(answer);
  });
}

let options: CliOptions;
try {
  options = parseCliArgs(process.argv.slice(2));
} catch (err) {
  const help = err instanceof CliUsageError && err.message === '';
  process.stderr.write(`${help ? '' : `${(err as Error).message}\n`}${USAGE}\n`);
  process.exit(help ? 0 : 2);
}
main(options).catch((err: unknown) => {
  process.stderr.write(`firmware-sim failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
