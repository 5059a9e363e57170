/** `startScanner`: the scanner on a real pty (or TCP), looking at a simulated printer's output. */
import { silentLogger, type SimLogger } from '../log.js';
import type { PrinterHandle } from '../printer/start-printer.js';
import type { Clock } from '../transports/clock.js';
import { PacedConnection } from '../transports/paced-connection.js';
import { PtyTransport } from '../transports/pty-transport.js';
import { TcpTransport } from '../transports/tcp-transport.js';
import type { DeviceTransport } from '../transports/types.js';
import { SimError } from '../errors.js';
import { Scanner, type ScanResult } from './scanner.js';

export interface StartScannerOptions {
  printer: PrinterHandle;
  /** `pty` (socat pair), `tcp`, or any {@link DeviceTransport}. */
  transport: 'pty' | 'tcp' | DeviceTransport;
  ptyDir?: string;
  port?: number;
  host?: string;
  /** Line pacing; default 115200 on a pty, unpaced on TCP. */
  baudRate?: number | null;
  /** Also report every label as it is printed, without a trigger. Default false. */
  autoReport?: boolean;
  clock?: Clock;
  log?: SimLogger;
}

export interface ScannerHandle {
  readonly transport: 'pty' | 'tcp';
  readonly path: string | undefined;
  readonly port: number | undefined;
  readonly host: string | undefined;
  /** Every read so far. */
  readonly reads: readonly ScanResult[];
  /** Changes the line pacing (`null`: unpaced). */
  setBaudRate(baud: number | null): void;
  close(): Promise<void>;
}

export async function startScanner(options: StartScannerOptions): Promise<ScannerHandle> {
  const log = (options.log ?? silentLogger).child('scanner');
  const kind = typeof options.transport === 'string' ? options.transport : undefined;
  let baud = options.baudRate === undefined ? (kind === 'tcp' ? null : 115200) : options.baudRate;
  const printer = options.printer;
  const scanner = new Scanner(
    {
      get labels() {
        return printer.labels;
      },
      readTag: (i) => printer.readTag(i),
    },
    log,
  );
  const transport =
    typeof options.transport !== 'string'
      ? options.transport
      : options.transport === 'tcp'
        ? new TcpTransport({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', log })
        : new PtyTransport({ name: 'scanner', dir: options.ptyDir, log });
  transport.events.on('connection', (conn) =>
    scanner.attach(new PacedConnection(conn, () => baud, options.clock)),
  );
  // Auto-report in print order, one report at a time.
  let reports = Promise.resolve();
  const off = options.autoReport
    ? printer.events.on('labelPrinted', (label) => {
        reports = reports
          .then(() => scanner.report(label))
          .catch((err: unknown) => log.warn('report failed', { err: String(err) }));
      })
    : () => {};
  await transport.start();
  const address = transport.address;
  return {
    transport: address.kind,
    path: address.kind === 'pty' ? address.path : undefined,
    port: address.kind === 'tcp' ? address.port : undefined,
    host: address.kind === 'tcp' ? address.host : undefined,
    get reads() {
      return scanner.reads;
    },
    setBaudRate: (b) => {
      if (b !== null && (!Number.isInteger(b) || b < 300))
        throw new SimError('INVALID_OPTION', 'baud rate must be 300 or more');
      baud = b;
    },
    close: async () => {
      off();
      await reports;
      await transport.close();
    },
  };
}
