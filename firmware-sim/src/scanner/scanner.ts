/**
 * The simulated scanner (a verifier over the label exit with an RFID reader beside it). On a
 * trigger (`SYN T CR`) it looks at the last printed label: decodes its PNG with a real QR decoder
 * and reads the EPC of its tag, and answers with the lines of the scanner protocol (`@dpp/shared`
 * scanner/protocol.ts). With `autoReport` it also reports every label as it comes out.
 */
import { AIM_QR_MODEL_2, formatScannerRead, ScannerCommandParser, type ScannerRead } from '@dpp/shared';
import type { SimLogger } from '../log.js';
import type { PrintedLabel } from '../printer/types.js';
import type { DeviceConnection } from '../transports/types.js';
import { decodeQrPng } from './decode.js';

/** What the scanner looks at: the printer's output. */
export interface ScanSource {
  readonly labels: readonly PrintedLabel[];
  readTag(labelIndex: number): string | null;
}

/** One read: the symbol line and the EPC line the scanner sent. */
export interface ScanResult {
  labelIndex: number | null;
  symbol: Extract<ScannerRead, { kind: 'symbol' | 'noRead' }>;
  tag: Extract<ScannerRead, { kind: 'epc' | 'noTag' }>;
  at: Date;
}

export class Scanner {
  readonly reads: ScanResult[] = [];
  private readonly connections = new Set<DeviceConnection>();

  constructor(
    private readonly source: ScanSource,
    private readonly log: SimLogger,
  ) {}

  attach(connection: DeviceConnection): void {
    const parser = new ScannerCommandParser();
    this.connections.add(connection);
    connection.events.on('close', () => this.connections.delete(connection));
    connection.events.on('data', (chunk) => {
      for (const cmd of parser.push(chunk.toString('latin1'))) {
        if (cmd === 'trigger') void this.send(connection, this.read());
      }
    });
  }

  /** Reads `label`, by default the last one printed. */
  read(label: PrintedLabel | undefined = this.source.labels[this.source.labels.length - 1]): ScanResult {
    const decoded = label ? decodeQrPng(label.png) : null;
    const epc = label ? this.source.readTag(label.index) : null;
    const result: ScanResult = {
      labelIndex: label?.index ?? null,
      symbol: decoded
        ? { kind: 'symbol', aimId: AIM_QR_MODEL_2, symbology: 'qr', data: decoded.data }
        : { kind: 'noRead' },
      tag: epc === null ? { kind: 'noTag' } : { kind: 'epc', epc },
      at: new Date(),
    };
    this.reads.push(result);
    this.log.info('scanned', {
      labelIndex: result.labelIndex,
      symbol: result.symbol.kind,
      tag: result.tag.kind,
    });
    return result;
  }

  /** Reads `label` as it passes and reports it on every open line (auto-report). */
  report(label: PrintedLabel): Promise<void> {
    const result = this.read(label);
    return Promise.all([...this.connections].map((c) => this.send(c, result))).then(() => undefined);
  }

  private send(connection: DeviceConnection, result: ScanResult): Promise<void> {
    const text = formatScannerRead(result.symbol) + formatScannerRead(result.tag);
    return connection.write(Buffer.from(text, 'utf8'));
  }
}
