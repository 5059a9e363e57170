/**
 * The scanner line protocol spoken by the simulated scanner (and by the agent to any scanner set up
 * the same way). Serial, 8N1, one read per line, every line ends with CR LF:
 *
 * | line                 | meaning                                                           |
 * |----------------------|-------------------------------------------------------------------|
 * | `]Q1<data>`          | a QR code was decoded; `]Q1` is its AIM symbology identifier      |
 * |                      | (ISO/IEC 15424: `Q` = QR Code, modifier `1` = model 2, no FNC1)   |
 * | `]<c><m><data>`      | any other symbology, AIM identifier `]` + code char + modifier:   |
 * |                      | `]d1` DataMatrix, `]d2` GS1 DataMatrix, `]C0` Code 128, `]C1`     |
 * |                      | GS1-128; GS1 data is sent as the symbol encodes it, the leading   |
 * |                      | FNC1 as the identifier and every later FNC1 as GS (0x1D)          |
 * | `EPC:<hex>`          | the EPC read from the label's RFID tag, upper-case hex            |
 * | `NOREAD`             | the scanner saw the label but decoded no symbol                   |
 * | `NOTAG`              | no RFID tag answered                                              |
 *
 * After a trigger the scanner sends one line per symbol it decoded on the label (the QR first, then a
 * DataMatrix, then a Code 128), or `NOREAD` when it decoded none, then the EPC line (or `NOTAG`), which
 * ends the read.
 * The host triggers a read with `SYN T CR` (0x16 0x54 0x0D), the serial trigger of Honeywell
 * scanners; `SYN U CR` stops a read and is accepted for symmetry. Data is sent as UTF-8. Data
 * containing CR or LF cannot be carried (GS1 Digital Links and EPCs never contain them).
 */
import { DeviceProtocolError } from '../zpl/errors.js';

/** Host → scanner: start a read (Honeywell serial trigger, SYN T CR). */
export const SCANNER_TRIGGER = '\x16T\r';
/** Host → scanner: stop a read (SYN U CR). */
export const SCANNER_UNTRIGGER = '\x16U\r';
/** Line terminator of every scanner line. */
export const SCANNER_LINE_END = '\r\n';
/** Prefix of an EPC line. */
export const SCANNER_EPC_PREFIX = 'EPC:';
/** AIM symbology identifier of a QR Code, model 2. */
export const AIM_QR_MODEL_2 = ']Q1';

/** One decoded scanner line. */
export type ScannerRead =
  | { kind: 'symbol'; aimId: string; symbology: 'qr' | 'other'; data: string }
  | { kind: 'epc'; epc: string }
  | { kind: 'noRead' }
  | { kind: 'noTag' };

/**
 * The line (CR LF included) for one read.
 *
 * @example
 * formatScannerRead({ kind: 'epc', epc: '30764433400D1EC000000002' }); // 'EPC:30764433400D1EC000000002\r\n'
 */
export function formatScannerRead(read: ScannerRead): string {
  switch (read.kind) {
    case 'symbol':
      if (/[\r\n]/.test(read.data)) {
        throw new DeviceProtocolError('MALFORMED_SCANNER_LINE', 'symbol data cannot contain CR or LF');
      }
      return read.aimId + read.data + SCANNER_LINE_END;
    case 'epc':
      return SCANNER_EPC_PREFIX + read.epc.toUpperCase() + SCANNER_LINE_END;
    case 'noRead':
      return 'NOREAD' + SCANNER_LINE_END;
    case 'noTag':
      return 'NOTAG' + SCANNER_LINE_END;
  }
}

/**
 * Parses one line (with or without its CR LF). Throws `MALFORMED_SCANNER_LINE` for anything else.
 *
 * @example
 * parseScannerLine(']Q1https://id.example.com/01/09506000134352/21/2');
 * // { kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: 'https://id.example.com/01/09506000134352/21/2' }
 */
export function parseScannerLine(line: string): ScannerRead {
  const text = line.replace(/\r?\n$|\r$/, '');
  if (text === 'NOREAD') return { kind: 'noRead' };
  if (text === 'NOTAG') return { kind: 'noTag' };
  if (text.startsWith(SCANNER_EPC_PREFIX)) {
    const epc = text.slice(SCANNER_EPC_PREFIX.length);
    if (/^(?:[0-9A-Fa-f]{4})+$/.test(epc)) return { kind: 'epc', epc: epc.toUpperCase() };
  }
  const aim = /^\](.)([0-9A-Za-z])/.exec(text);
  if (aim) {
    const aimId = aim[0];
    return { kind: 'symbol', aimId, symbology: aim[1] === 'Q' ? 'qr' : 'other', data: text.slice(3) };
  }
  throw new DeviceProtocolError('MALFORMED_SCANNER_LINE', 'not a scanner read line', { details: { line } });
}
