/**
 * Streaming parsers for both directions of the scanner line protocol (see `protocol.ts`): they
 * buffer across chunk boundaries and resync after garbage.
 */
import { parseScannerLine, type ScannerRead } from './protocol.js';

/** A read line, or text that is not one. */
export type ScannerLineEvent = ScannerRead | { kind: 'garbage'; text: string };

/**
 * Host side: splits the scanner's output into reads. Input is decoded UTF-8 text.
 *
 * @example
 * const parser = new ScannerLineParser();
 * parser.push(']Q1https://id.exa'); // []
 * parser.push('mple.com/x\r\nNOTAG\r\n'); // [{ kind: 'symbol', ... }, { kind: 'noTag' }]
 */
export class ScannerLineParser {
  private buf = '';

  constructor(private readonly maxLineLength = 8192) {}

  push(chunk: string): ScannerLineEvent[] {
    this.buf += chunk;
    const out: ScannerLineEvent[] = [];
    for (let end = this.buf.search(/[\r\n]/); end >= 0; end = this.buf.search(/[\r\n]/)) {
      const line = this.buf.slice(0, end);
      this.buf = this.buf.slice(end + 1);
      if (line.length === 0) continue;
      try {
        out.push(parseScannerLine(line));
      } catch {
        out.push({ kind: 'garbage', text: line });
      }
    }
    if (this.buf.length > this.maxLineLength) {
      out.push({ kind: 'garbage', text: this.buf });
      this.buf = '';
    }
    return out;
  }
}

/** A command from the host. */
export type ScannerCommand = 'trigger' | 'untrigger';

/**
 * Scanner side: finds `SYN T CR` / `SYN U CR` in whatever the host sends, skipping anything else.
 *
 * @example
 * new ScannerCommandParser().push('noise\x16T\r'); // ['trigger']
 */
export class ScannerCommandParser {
  private buf = '';

  push(chunk: string): ScannerCommand[] {
    this.buf += chunk;
    const out: ScannerCommand[] = [];
    for (;;) {
      const syn = this.buf.indexOf('\x16');
      if (syn < 0) {
        this.buf = '';
        break;
      }
      const frame = this.buf.slice(syn, syn + 3);
      if (frame.length < 3) {
        this.buf = this.buf.slice(syn);
        break;
      }
      if (frame === '\x16T\r') out.push('trigger');
      else if (frame === '\x16U\r') out.push('untrigger');
      // On a match skip the frame; otherwise skip only the SYN and resync on the next one.
      this.buf = this.buf.slice(frame === '\x16T\r' || frame === '\x16U\r' ? syn + 3 : syn + 1);
    }
    return out;
  }
}
