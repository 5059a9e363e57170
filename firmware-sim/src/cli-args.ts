/** Command-line options of the simulator, read once and validated (STYLE principle 7). */
import { parseArgs } from 'node:util';
import { RFID_PRINTER_MECHANICS, type PrinterMechanics } from './printer/mechanics.js';
import { isFaultName, isLabelFault, type FaultName, type LabelFault } from './faults/faults.js';

export interface CliOptions {
  printer: 'pty' | 'tcp';
  port: number;
  host: string;
  baud: number | null | undefined;
  scanner: 'pty' | 'tcp' | 'none';
  scannerPort: number;
  scannerAuto: boolean;
  dpi: 203 | 300 | 600;
  labelDir: string | undefined;
  ptyDir: string | undefined;
  faults: FaultName[];
  scripts: Array<{ n: number; fault: LabelFault }>;
  hostStatusWhenFaulted: 'answer' | 'silent';
  /** An NFC encoder is fitted (--nfc). */
  nfc: boolean;
  /** EPC memory of the UHF inlays, bits (--tag-epc-bits); undefined: the default 496. */
  tagEpcBits: number | undefined;
  /** The mechanical model; null with --instant. */
  mechanics: PrinterMechanics | null;
  verbose: boolean;
}

export const USAGE = `usage: npm run sim -- [options]
  --printer pty|tcp        transport of the printer (default pty)
  --port N                 TCP port of the printer (default 9100; 0 = any free port)
  --host ADDR              TCP bind address (default 127.0.0.1)
  --baud N|off             line pacing in baud (default 115200 on a pty, off on TCP)
  --scanner pty|tcp|none   start the scanner too (default none)
  --scanner-port N         TCP port of the scanner (default 0 = any free port)
  --scanner-auto           the scanner reports every label without a trigger
  --dpi 203|300|600        print resolution (default 203)
  --label-dir DIR          keep label PNGs here (default: a temp folder, kept)
  --pty-dir DIR            where the pty links are made (default: a temp folder)
  --fault NAME             set a fault from the start (repeatable)
  --script N:FAULT         script a label fault for format N (repeatable)
  --speed IPS              print speed, inches per second (default 6)
  --label-length IN        label pitch, inches (default 2)
  --encode-ms N            RFID write time per tag, ms (default 100)
  --readback-ms N          RFID read-back (verify) time per tag, ms (default 40)
  --nfc                    fit an NFC (HF) encoder: ^WT/^RT write and read an NTAG215-like tag
  --tag-epc-bits N         EPC memory of the UHF inlays, 96 to 496 bits (default 496)
  --instant                no mechanical model: labels come out as fast as they render
  --hs-silent              no ~HS answer while media out, ribbon out or head open
  --verbose                debug logs on stderr
Faults: paperOut ribbonOut headOpen paused smudged voidTag voidNfcTag wrongContent disconnect dropAfterPrint`;

export class CliUsageError extends Error {}

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new CliUsageError(`--${name} must be a whole number`);
  return Number(value);
}

function positive(name: string, value: string | undefined, fallback: number, zeroOk = false): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n) || (n === 0 && !zeroOk))
    throw new CliUsageError(`--${name} must be a ${zeroOk ? 'non-negative' : 'positive'} number`);
  return n;
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new CliUsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function tagEpcBits(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = int('tag-epc-bits', value, 0);
  if (n < 96 || n > 496 || n % 16 !== 0)
    throw new CliUsageError('--tag-epc-bits must be whole 16-bit words from 96 to 496');
  return n;
}

export function parseCliArgs(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      printer: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      baud: { type: 'string' },
      scanner: { type: 'string' },
      'scanner-port': { type: 'string' },
      'scanner-auto': { type: 'boolean' },
      dpi: { type: 'string' },
      'label-dir': { type: 'string' },
      'pty-dir': { type: 'string' },
      fault: { type: 'string', multiple: true },
      script: { type: 'string', multiple: true },
      'hs-silent': { type: 'boolean' },
      speed: { type: 'string' },
      'label-length': { type: 'string' },
      'encode-ms': { type: 'string' },
      'readback-ms': { type: 'string' },
      instant: { type: 'boolean' },
      nfc: { type: 'boolean' },
      'tag-epc-bits': { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) throw new CliUsageError('');
  const faults = (values.fault ?? []).map((f) => {
    if (!isFaultName(f)) throw new CliUsageError(`unknown fault ${f}`);
    return f;
  });
  const scripts = (values.script ?? []).map((s) => {
    const m = /^(\d+):(\w+)$/.exec(s);
    if (!m || !isLabelFault(m[2] ?? ''))
      throw new CliUsageError(`--script wants N:FAULT with a label fault, got ${s}`);
    return { n: Number(m[1]), fault: m[2] as LabelFault };
  });
  const baud =
    values.baud === undefined ? undefined : values.baud === 'off' ? null : int('baud', values.baud, 0);
  return {
    printer: oneOf('printer', values.printer, ['pty', 'tcp'] as const, 'pty'),
    port: int('port', values.port, 9100),
    host: values.host ?? '127.0.0.1',
    baud,
    scanner: oneOf('scanner', values.scanner, ['pty', 'tcp', 'none'] as const, 'none'),
    scannerPort: int('scanner-port', values['scanner-port'], 0),
    scannerAuto: values['scanner-auto'] ?? false,
    dpi: Number(oneOf('dpi', values.dpi, ['203', '300', '600'] as const, '203')) as 203 | 300 | 600,
    labelDir: values['label-dir'],
    ptyDir: values['pty-dir'],
    faults,
    scripts,
    hostStatusWhenFaulted: values['hs-silent'] ? 'silent' : 'answer',
    nfc: values.nfc ?? false,
    tagEpcBits: tagEpcBits(values['tag-epc-bits']),
    mechanics: values.instant
      ? null
      : {
          printSpeedIps: positive('speed', values.speed, RFID_PRINTER_MECHANICS.printSpeedIps),
          labelLengthIn: positive(
            'label-length',
            values['label-length'],
            RFID_PRINTER_MECHANICS.labelLengthIn,
          ),
          rfidEncodeMs: positive('encode-ms', values['encode-ms'], RFID_PRINTER_MECHANICS.rfidEncodeMs, true),
          rfidReadBackMs: positive(
            'readback-ms',
            values['readback-ms'],
            RFID_PRINTER_MECHANICS.rfidReadBackMs,
            true,
          ),
        },
    verbose: values.verbose ?? false,
  };
}
