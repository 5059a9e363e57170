/**
 * `startPrinter`: the printer on a real pty (socat) or TCP port, with its fault controls. The
 * library door for tests and the CLI.
 */
import {
  decodeHostStatusSerial,
  encodeHostStatusSerial,
  printerStatusFromHostStatus,
  type PrinterStatus,
  type RfidErrorHandling,
  type TypedEvents,
} from '@dpp/shared';
import { SimError } from '../errors.js';
import { defaultWrongContent } from '../faults/wrong-content.js';
import { FaultController, type FaultControl } from '../faults/faults.js';
import { silentLogger, type SimLogger } from '../log.js';
import { LabelStore } from '../render/label-store.js';
import { dpiToDpmm, ZebrashRenderer, type LabelRenderer } from '../render/zpl-renderer.js';
import { RfidEncoder } from '../rfid/encoder.js';
import { NfcEncoder, nfcUriOf } from '../nfc/encoder.js';
import type { Clock } from '../transports/clock.js';
import { PacedConnection } from '../transports/paced-connection.js';
import { PtyTransport } from '../transports/pty-transport.js';
import { TcpTransport } from '../transports/tcp-transport.js';
import type { DeviceTransport } from '../transports/types.js';
import { checkMechanics, type PrinterMechanics } from './mechanics.js';
import { Printer } from './printer.js';
import type { PrintedLabel, PrinterEvents } from './types.js';

export interface StartPrinterOptions {
  /** `pty` (socat pair), `tcp`, or any {@link DeviceTransport} handed in. */
  transport: 'pty' | 'tcp' | DeviceTransport;
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** TCP bind address; default 127.0.0.1. */
  host?: string;
  /** Folder of the pty links; a temp folder when omitted. */
  ptyDir?: string;
  /** Line pacing in baud (10 bits per byte). Default 115200 on a pty, unpaced (`null`) on TCP. */
  baudRate?: number | null;
  /** Print resolution; default 203 dpi (8 dots/mm). */
  dpi?: 203 | 300 | 600;
  /** Label size until a format sets `^PW`/`^LL`; default 4 x 6 inches at the dpi. */
  widthDots?: number;
  lengthDots?: number;
  /** Folder where each label's PNG and ZPL are kept; a temp folder (removed on close) when omitted. */
  labelDir?: string;
  /** Keep the temp label folder on close. */
  keepLabels?: boolean;
  /** See {@link PrinterConfig.hostStatusWhenFaulted}; default `answer`. */
  hostStatusWhenFaulted?: 'answer' | 'silent';
  /** See {@link PrinterConfig.headMs}; default 0. */
  headMs?: number;
  /**
   * The mechanical model (mechanics.ts): print speed, label length, RFID encode and read-back time; each
   * label takes that long to come out, one at a time. `RFID_PRINTER_MECHANICS` is a ZT411 RFID class
   * printer at a production setting (the CLI's default). Omitted or null: labels come out as fast as they
   * render, which keeps tests quick.
   */
  mechanics?: PrinterMechanics | null;
  /** The printer's RFID defaults before any `^RS`; default 3 tries, error handling N (Zebra's). */
  rfidDefaults?: { tries?: number; onError?: RfidErrorHandling };
  /** Whether an RFID encoder is fitted; default true. */
  rfid?: boolean;
  /**
   * EPC memory of the UHF inlays on the roll, in bits (96 to 496, whole words); default 496. A 128-bit roll
   * cannot take an SGTIN-198: the encoder's write fails and the label is VOID, as on a real printer.
   */
  tagEpcBits?: number;
  /** Whether an NFC (HF) encoder is fitted, with an NTAG215-like tag under each label; default false. */
  nfc?: boolean;
  /** What a wrong-content label encodes instead of the data sent. */
  wrongContent?: (payload: string) => string;
  /** Renderer; `zpl-renderer-js` by default. */
  renderer?: LabelRenderer;
  clock?: Clock;
  log?: SimLogger;
}

export interface PrinterHandle {
  readonly transport: 'pty' | 'tcp';
  /** The pty path the host opens (pty only). */
  readonly path: string | undefined;
  /** The TCP port (tcp only). */
  readonly port: number | undefined;
  readonly host: string | undefined;
  readonly labelDir: string;
  /** Every physical label printed so far, in order. */
  readonly labels: readonly PrintedLabel[];
  readonly faults: FaultControl;
  readonly events: TypedEvents<PrinterEvents>;
  /** The status `~HS` would report now. */
  status(): PrinterStatus;
  /** The EPC an RFID reader held over label `index` reads now, or null without a tag. */
  readTag(labelIndex: number): string | null;
  /** The URI an NFC reader held over label `index` reads now, or null without an NFC tag or URI record. */
  readNfcTag(labelIndex: number): string | null;
  /** Resolves with the first `count` labels once they are printed. */
  waitForLabels(count: number, timeoutMs?: number): Promise<PrintedLabel[]>;
  /** The operator presses PAUSE to resume / clears an RFID error. */
  resume(): void;
  /** Stops the printer, kills socat or closes the port; labels in a temp folder are removed. */
  close(): Promise<void>;
}

const SERIAL_DEFAULTS = { dataBits: 8, stopBits: 1, parity: 'none', handshake: 'xon/xoff' } as const;

export async function startPrinter(options: StartPrinterOptions): Promise<PrinterHandle> {
  const log = (options.log ?? silentLogger).child('printer');
  const kind = typeof options.transport === 'string' ? options.transport : undefined;
  const baud = options.baudRate === undefined ? (kind === 'tcp' ? null : 115200) : options.baudRate;
  const dpi = options.dpi ?? 203;
  if (![203, 300, 600].includes(dpi)) throw new SimError('INVALID_OPTION', 'dpi must be 203, 300 or 600');
  const faults = new FaultController(baud);
  const store = await LabelStore.open(options.labelDir, options.keepLabels);
  const printer = new Printer(
    {
      dpmm: dpiToDpmm(dpi),
      widthDots: options.widthDots ?? Math.round(4 * dpi),
      lengthDots: options.lengthDots ?? Math.round(6 * dpi),
      serial: serialFor(baud),
      hostStatusWhenFaulted: options.hostStatusWhenFaulted ?? 'answer',
      headMs: options.headMs ?? 0,
      mechanics: mechanicsOf(options.mechanics),
      rfid: options.rfid ?? true,
      nfc: options.nfc ?? false,
      rfidSetup: {
        tagType: '8',
        voidLengthDots: undefined,
        tries: options.rfidDefaults?.tries ?? 3,
        onError: options.rfidDefaults?.onError ?? 'N',
      },
      wrongContent: options.wrongContent ?? defaultWrongContent,
    },
    {
      faults,
      encoder: new RfidEncoder(log.child('rfid'), options.tagEpcBits),
      nfcEncoder: new NfcEncoder(log.child('nfc')),
      renderer: options.renderer ?? new ZebrashRenderer(),
      store,
      log,
    },
  );
  const transport =
    typeof options.transport !== 'string'
      ? options.transport
      : options.transport === 'tcp'
        ? new TcpTransport({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', log })
        : new PtyTransport({ name: 'printer', dir: options.ptyDir, log });
  transport.events.on('connection', (conn) =>
    printer.attach(new PacedConnection(conn, () => faults.baudRate, options.clock)),
  );
  await transport.start();
  const address = transport.address;

  return {
    transport: address.kind,
    path: address.kind === 'pty' ? address.path : undefined,
    port: address.kind === 'tcp' ? address.port : undefined,
    host: address.kind === 'tcp' ? address.host : undefined,
    labelDir: store.dir,
    get labels() {
      return printer.labels;
    },
    faults,
    events: printer.events,
    status: () => printerStatusFromHostStatus(printer.hostStatus()),
    readTag: (i) => printer.tagOf(i)?.epcHex ?? null,
    readNfcTag: (i) => {
      const tag = printer.nfcTagOf(i);
      return tag ? nfcUriOf(tag) : null;
    },
    waitForLabels: (count, timeoutMs = 15_000) => waitForLabels(printer, count, timeoutMs),
    resume: () => printer.resume(),
    close: async () => {
      await transport.close();
      await printer.close();
      await store.close();
    },
  };
}

function mechanicsOf(m: PrinterMechanics | null | undefined): PrinterMechanics | null {
  if (!m) return null;
  try {
    return checkMechanics({ ...m });
  } catch (err) {
    throw new SimError('INVALID_OPTION', (err as Error).message);
  }
}

/** The `~HS` serial settings: the pacing baud rate, or 9600 8N1 (the Zebra default) when unpaced. */
function serialFor(baud: number | null) {
  const wanted = { baudRate: baud ?? 9600, ...SERIAL_DEFAULTS };
  try {
    return decodeHostStatusSerial(encodeHostStatusSerial(wanted));
  } catch {
    return { ...wanted, baudRate: 9600 };
  }
}

function waitForLabels(printer: Printer, count: number, timeoutMs: number): Promise<PrintedLabel[]> {
  if (printer.labels.length >= count) return Promise.resolve(printer.labels.slice(0, count));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(
        new SimError('TIMEOUT', `${count} labels not printed within ${timeoutMs} ms`, {
          details: { printed: printer.labels.length },
        }),
      );
    }, timeoutMs);
    const off = printer.events.on('labelPrinted', () => {
      if (printer.labels.length < count) return;
      clearTimeout(timer);
      off();
      resolve(printer.labels.slice(0, count));
    });
  });
}
