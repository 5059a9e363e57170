/**
 * A scanner on a serial (or TCP) line speaking the scanner line protocol of `@dpp/shared`: the host sends
 * the trigger (SYN T CR); the scanner answers one line per symbol (`]Q1<data>`, `]d2<data>`, ...) or
 * `NOREAD`, then the tag line (`EPC:<hex>` or `NOTAG`) when it has an RFID reader, which ends the read. Lines are parsed by the shared
 * `ScannerLineParser`, which buffers across chunks and skips noise.
 */
import { SCANNER_TRIGGER, ScannerLineParser, type ScannerRead } from '@dpp/shared';
import { AgentError } from '../errors.js';
import type { ByteLink } from '../transports/index.js';
import { abortReason } from '../util/time.js';
import type { ScanRead, Scanner } from './types.js';

export interface LineScannerOptions {
  name: string;
  link: ByteLink;
  /** How long to wait for the tag line once the symbol line came. */
  tagLineWaitMs?: number;
}

export class LineScanner implements Scanner {
  private readonly parser = new ScannerLineParser();
  private readonly reads: ScannerRead[] = [];
  private notify: (() => void) | null = null;
  private busy: Promise<unknown> = Promise.resolve();
  private readonly off: () => void;

  constructor(private readonly options: LineScannerOptions) {
    this.off = options.link.events.on('data', (chunk) => {
      for (const e of this.parser.push(chunk.toString('utf8'))) if (e.kind !== 'garbage') this.reads.push(e);
      this.notify?.();
    });
  }

  get name(): string {
    return this.options.name;
  }

  scan(options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<ScanRead> {
    const run = this.busy.then(() => this.scanOnce(options));
    this.busy = run.catch(() => undefined);
    return run;
  }

  private async scanOnce(o: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<ScanRead> {
    this.reads.length = 0; // a stale line (auto-report, an earlier timeout) is not this label's
    await this.options.link.write(Buffer.from(SCANNER_TRIGGER, 'latin1'));
    const symbolLine = await this.nextRead(
      (r) => r.kind === 'symbol' || r.kind === 'noRead',
      o.timeoutMs,
      o.signal,
    );
    if (!symbolLine)
      throw new AgentError('SCANNER_TIMEOUT', `${this.name}: no read within ${o.timeoutMs} ms`);
    // More symbol lines of the same read may follow; the tag line ends it.
    const symbols: { aimId: string; data: string }[] = [];
    let line: ScannerRead | null = symbolLine;
    while (line && line.kind === 'symbol') {
      symbols.push({ aimId: line.aimId, data: line.data });
      line = await this.nextRead(
        (r) => r.kind === 'symbol' || r.kind === 'epc' || r.kind === 'noTag',
        this.options.tagLineWaitMs ?? 500,
        o.signal,
      );
    }
    if (line?.kind === 'noRead') {
      line = await this.nextRead(
        (r) => r.kind === 'epc' || r.kind === 'noTag',
        this.options.tagLineWaitMs ?? 500,
        o.signal,
      );
    }
    const tagLine = line && (line.kind === 'epc' || line.kind === 'noTag') ? line : null;
    const qr = symbols.find((x) => x.aimId.startsWith(']Q'));
    return {
      symbol: qr ? qr.data : null,
      symbols,
      epc: tagLine === null ? undefined : tagLine.kind === 'epc' ? tagLine.epc : null,
    };
  }

  /** The next read matching `match`, or null after `timeoutMs`. */
  private nextRead(
    match: (r: ScannerRead) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ScannerRead | null> {
    return new Promise((resolve, reject) => {
      const take = (): boolean => {
        const i = this.reads.findIndex(match);
        if (i < 0) return false;
        finish();
        resolve(this.reads.splice(i, 1)[0]!);
        return true;
      };
      const onAbort = () => {
        finish();
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        finish();
        resolve(null);
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.notify = null;
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (!take()) this.notify = () => void take();
    });
  }

  async close(): Promise<void> {
    this.off();
    await this.options.link.close();
  }
}
