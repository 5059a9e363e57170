/**
 * The simulated scanner (a verifier over the label exit with an RFID reader beside it). On a
 * trigger (`SYN T CR`) it looks at the last printed label: decodes every symbol on its PNG with a real
 * decoder (QR, DataMatrix, Code 128) and reads the EPC of its tag, and answers with the lines of the
 * scanner protocol (`@dpp/shared` scanner/protocol.ts): one line per symbol, QR first, then the tag line,
 * which ends the read. With `autoReport` it also reports every label as it comes out.
 */
import { formatScannerRead, ScannerCommandParser, type ScannerRead } from '@dpp/shared';
import type { SimLogger } from '../log.js';
import type { PrintedLabel } from '../printer/types.js';
import type { DeviceConnection } from '../transports/types.js';
import { decodeSymbolsPng } from './symbols.js';

/** What the scanner looks at: the printer's output. */
export interface ScanSource {
  readonly labels: readonly PrintedLabel[];
  readTag(labelIndex: number): string | null;
}

/** One read: the symbol lines (or NOREAD) and the EPC line the scanner sent. */
export interface ScanResult {
  labelIndex: number | null;
  /** The first symbol line (the QR when there is one), or NOREAD. */
  symbol: Extract<ScannerRead, { kind: 'symbol' | 'noRead' }>;
  /** Every symbol line, in the order sent (QR, DataMatrix, Code 128); empty for NOREAD. */
  symbols: Extract<ScannerRead, { kind: 'symbol' }>[];
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
        if (cmd === 'trigger')
          void this.read()
            .then((result) => this.send(connection, result))
            .catch((err: unknown) => this.log.warn('read failed', { err: String(err) }));
      }
    });
  }

  /** Reads `label`, by default the last one printed. */
  async read(
    label: PrintedLabel | undefined = this.source.labels[this.source.labels.length - 1],
  ): Promise<ScanResult> {
    const decoded = label ? await decodeSymbolsPng(label.png) : [];
    const epc = label ? this.source.readTag(label.index) : null;
    const symbols = decoded.map((d): Extract<ScannerRead, { kind: 'symbol' }> => ({
      kind: 'symbol',
      aimId: d.aimId,
      symbology: d.aimId.startsWith(']Q') ? 'qr' : 'other',
      data: d.data,
    }));
    const result: ScanResult = {
      labelIndex: label?.index ?? null,
      symbol: symbols[0] ?? { kind: 'noRead' },
      symbols,
      tag: epc === null ? { kind: 'noTag' } : { kind: 'epc', epc },
      at: new Date(),
    };
    this.reads.push(result);
    this.log.info('scanned', {
      labelIndex: result.labelIndex,
      symbols: result.symbols.map((x) => x.aimId).join(' ') || 'NOREAD',
      tag: result.tag.kind,
    });
    return result;
  }

  /** Reads `label` as it passes and reports it on every open line (auto-report). */
  async report(label: PrintedLabel): Promise<void> {
    const result = await this.read(label);
    await Promise.all([...this.connections].map((c) => this.send(c, result)));
  }

  private send(connection: DeviceConnection, result: ScanResult): Promise<void> {
    const lines = result.symbols.length > 0 ? result.symbols : [result.symbol];
    const text = lines.map(formatScannerRead).join('') + formatScannerRead(result.tag);
    return connection.write(Buffer.from(text, 'utf8'));
  }
}
