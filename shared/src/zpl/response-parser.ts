/**
 * Host side of the printer's back channel: splits what the printer sends (the `~HS` strings, the
 * `~HQES` block, `^HV` answers) into typed answers across arbitrary chunk boundaries, and resyncs
 * after garbage (a frame without its ETX, noise between answers).
 */
import { ETX, STX } from './control-chars.js';
import { parseHqesStatus, type HqesStatus } from './error-status.js';
import { HOST_STATUS_FIELD_COUNTS, parseHostStatus, type HostStatus } from './host-status.js';
import { DeviceProtocolError } from './errors.js';
import {
  DEFAULT_HOST_VERIFICATION_FRAMING,
  NFC_HOST_VERIFICATION_FRAMING,
  type HostVerificationFraming,
} from './host-verification.js';
import { printerStatusFromHqes, printerStatusFromHostStatus, type PrinterStatus } from './printer-status.js';

/** One answer from the printer. */
export type ZplResponse =
  | { kind: 'hostStatus'; hostStatus: HostStatus; status: PrinterStatus; raw: string }
  | { kind: 'errorStatus'; errorStatus: HqesStatus; status: PrinterStatus; raw: string }
  /** A `^HV` answer; `header` tells which read-back it is (`EPC:` the UHF tag, `NFC:` the NFC tag). */
  | { kind: 'hostVerification'; header: string; data: string; raw: string }
  | { kind: 'garbage'; text: string };

/** Options of a {@link ZplResponseParser}. */
export interface ZplResponseParserOptions {
  /**
   * Framing of `^HV` answers, one per read-back (all with the same terminator); the writer's defaults
   * (`EPC:` ... CR LF and `NFC:` ... CR LF) when omitted.
   */
  hostVerification?: HostVerificationFraming | readonly HostVerificationFraming[];
  /** Longest frame or line kept while waiting for its end; default 8192 characters. */
  maxFrameLength?: number;
}

/**
 * Streaming parser of printer answers. Feed bytes decoded as `latin1`.
 *
 * @example
 * const parser = new ZplResponseParser();
 * port.on('data', (chunk: Buffer) => {
 *   for (const answer of parser.push(chunk.toString('latin1'))) {
 *     if (answer.kind === 'hostStatus' && answer.status.paperOut) alarm();
 *   }
 * });
 */
export class ZplResponseParser {
  private buf = '';
  private hostStatusFrames: string[] = [];
  private readonly headers: readonly string[];
  private readonly terminator: string;
  private readonly maxLength: number;

  constructor(options: ZplResponseParserOptions = {}) {
    const given = options.hostVerification ?? [
      DEFAULT_HOST_VERIFICATION_FRAMING,
      NFC_HOST_VERIFICATION_FRAMING,
    ];
    const framings = Array.isArray(given) ? given : [given as HostVerificationFraming];
    const terminator = framings[0]?.terminator;
    if (terminator === undefined || framings.some((f) => f.terminator !== terminator)) {
      throw new DeviceProtocolError(
        'INVALID_PARAMETER',
        'host verification framings must be at least one, all with the same terminator',
      );
    }
    this.headers = framings.map((f) => f.header);
    this.terminator = terminator;
    this.maxLength = options.maxFrameLength ?? 8192;
  }

  /** Feeds one chunk, returns the answers it completed. */
  push(chunk: string): ZplResponse[] {
    this.buf += chunk;
    const out: ZplResponse[] = [];
    while (this.buf.length > 0 && this.step(out));
    return out;
  }

  /** Drops everything buffered, e.g. after the line was reopened. */
  reset(): void {
    this.buf = '';
    this.hostStatusFrames = [];
  }

  /** Consumes one unit from the buffer; false when more input is needed. */
  private step(out: ZplResponse[]): boolean {
    const stx = this.buf.indexOf(STX);
    if (stx === 0) return this.stepFrame(out);
    const segment = stx < 0 ? this.buf : this.buf.slice(0, stx);
    const term = this.terminator;
    const t = term === '' ? -1 : segment.indexOf(term);
    if (t >= 0) {
      this.line(segment.slice(0, t), segment.slice(0, t + term.length), out);
      this.buf = this.buf.slice(t + term.length);
      return true;
    }
    if (stx > 0) {
      // The answer before a frame is complete: nothing more will be added to it.
      this.line(segment, segment, out);
      this.buf = this.buf.slice(stx);
      return true;
    }
    if (this.buf.length > this.maxLength) {
      this.garbage(this.buf, out);
      this.buf = '';
    }
    return false;
  }

  private stepFrame(out: ZplResponse[]): boolean {
    const etx = this.buf.indexOf(ETX, 1);
    const nextStx = this.buf.indexOf(STX, 1);
    if (nextStx > 0 && (etx < 0 || nextStx < etx)) {
      // A frame that never got its ETX: resync on the next STX.
      this.garbage(this.buf.slice(0, nextStx), out);
      this.buf = this.buf.slice(nextStx);
      return true;
    }
    if (etx < 0) {
      if (this.buf.length > this.maxLength) {
        this.garbage(this.buf, out);
        this.buf = '';
      }
      return false;
    }
    const body = this.buf.slice(1, etx);
    this.buf = this.buf.slice(etx + 1);
    this.frame(body, out);
    return true;
  }

  private frame(body: string, out: ZplResponse[]): void {
    if (/PRINTER STATUS/i.test(body)) {
      this.abandonHostStatus(out);
      try {
        const errorStatus = parseHqesStatus(body);
        out.push({
          kind: 'errorStatus',
          errorStatus,
          status: printerStatusFromHqes(errorStatus),
          raw: STX + body + ETX,
        });
      } catch {
        this.garbage(STX + body + ETX, out);
      }
      return;
    }
    const count = body.split(',').length;
    const expected = HOST_STATUS_FIELD_COUNTS[this.hostStatusFrames.length];
    if (count !== expected) {
      this.abandonHostStatus(out);
      if (count !== HOST_STATUS_FIELD_COUNTS[0]) {
        this.garbage(STX + body + ETX, out);
        return;
      }
    }
    this.hostStatusFrames.push(body);
    if (this.hostStatusFrames.length < 3) return;
    const frames = this.hostStatusFrames;
    this.hostStatusFrames = [];
    const raw = frames.map((f) => STX + f + ETX).join('\r\n') + '\r\n';
    try {
      const hostStatus = parseHostStatus(frames);
      out.push({ kind: 'hostStatus', hostStatus, status: printerStatusFromHostStatus(hostStatus), raw });
    } catch {
      this.garbage(raw, out);
    }
  }

  private abandonHostStatus(out: ZplResponse[]): void {
    if (this.hostStatusFrames.length > 0)
      this.garbage(this.hostStatusFrames.map((f) => STX + f + ETX).join(''), out);
    this.hostStatusFrames = [];
  }

  private line(text: string, raw: string, out: ZplResponse[]): void {
    const body = text.replace(/^[\r\n\s]+/, '');
    if (body.length === 0) return;
    const header = this.headers.find((h) => body.startsWith(h));
    if (header !== undefined) {
      out.push({ kind: 'hostVerification', header, data: body.slice(header.length), raw });
    } else {
      this.garbage(text, out);
    }
  }

  private garbage(text: string, out: ZplResponse[]): void {
    out.push({ kind: 'garbage', text });
  }
}
