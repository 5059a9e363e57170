/**
 * `~HS` host status return (ZPL II Programming Guide, ~HS): three strings, each
 * `<STX>fields<ETX><CR><LF>`:
 *
 * - string 1 `aaa,b,c,dddd,eee,f,g,h,iii,j,k,l`: communication settings, paper out flag, pause flag,
 *   label length (dots), number of formats in receive buffer, buffer full flag, communications
 *   diagnostic mode flag, partial format flag, unused (always 000), corrupt RAM flag, under
 *   temperature flag, over temperature flag;
 * - string 2 `mmm,n,o,p,q,r,s,t,uuuuuuuu,v,www`: function settings, unused, head up flag, ribbon out
 *   flag, thermal transfer mode flag, print mode, print width mode, label waiting flag, labels
 *   remaining in batch, format while printing flag (always 1), number of graphic images stored;
 * - string 3 `xxxx,y`: password, static RAM installed flag.
 */
import { DeviceProtocolError } from './errors.js';
import { CRLF, ETX, STX } from './control-chars.js';

/** Serial settings packed into `aaa` (bits a8..a0). */
export interface HostStatusSerialSettings {
  /** Baud rate, or `undefined` when the code is not one the guide's table names. */
  baudRate: number | undefined;
  dataBits: 7 | 8;
  stopBits: 1 | 2;
  parity: 'none' | 'odd' | 'even';
  handshake: 'xon/xoff' | 'dtr';
}

/** Function settings packed into `mmm` (bits m7..m0). */
export interface HostStatusFunctionSettings {
  /** m7: 1 = continuous media, 0 = die-cut. */
  continuousMedia: boolean;
  /** m6: sensor profile on. */
  sensorProfile: boolean;
  /** m5: communications diagnostics on. */
  communicationsDiagnostics: boolean;
  /** m0: 1 = thermal transfer, 0 = direct thermal. */
  thermalTransfer: boolean;
}

/** `r`, the print mode character of string 2. */
export type HostStatusPrintMode = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | 'K' | 'S';

/** Names of the print mode codes. */
export const HOST_STATUS_PRINT_MODES: Readonly<Record<HostStatusPrintMode, string>> = {
  '0': 'rewind',
  '1': 'peel-off',
  '2': 'tear-off',
  '3': 'cutter',
  '4': 'applicator',
  '5': 'delayed cut',
  '6': 'linerless peel',
  '7': 'linerless rewind',
  '8': 'partial cutter',
  '9': 'RFID',
  K: 'kiosk',
  S: 'stream',
};

/** Everything `~HS` reports, named. */
export interface HostStatus {
  serial: HostStatusSerialSettings;
  paperOut: boolean;
  paused: boolean;
  labelLengthDots: number;
  formatsInBuffer: number;
  bufferFull: boolean;
  diagnosticMode: boolean;
  partialFormat: boolean;
  corruptRam: boolean;
  underTemperature: boolean;
  overTemperature: boolean;
  functionSettings: HostStatusFunctionSettings;
  headUp: boolean;
  ribbonOut: boolean;
  thermalTransferMode: boolean;
  printMode: HostStatusPrintMode;
  /** `s`, print width mode: kept as the character sent (its codes vary by model). */
  printWidthMode: string;
  labelWaiting: boolean;
  labelsRemaining: number;
  graphicsStored: number;
  password: string;
  staticRam: boolean;
}

/**
 * Baud codes a8 a2 a1 a0 of `aaa` (ZPL II Programming Guide, ~HS table). 28800, 38400 and 57600
 * are "available only on certain printer models". 115200 has no code in the guide's table; the
 * simulator reports it as 1 100, the next free code. That mapping is ours, not the guide's.
 */
const BAUD_CODES: ReadonlyArray<readonly [number, number]> = [
  [0b0000, 110],
  [0b0001, 300],
  [0b0010, 600],
  [0b0011, 1200],
  [0b0100, 2400],
  [0b0101, 4800],
  [0b0110, 9600],
  [0b0111, 19200],
  [0b1000, 28800],
  [0b1001, 38400],
  [0b1010, 57600],
  [0b1011, 14400],
  [0b1100, 115200],
];

/**
 * Packs serial settings into the decimal `aaa` value of `~HS` string 1.
 *
 * @example
 * encodeHostStatusSerial({ baudRate: 9600, dataBits: 8, stopBits: 1, parity: 'none', handshake: 'xon/xoff' }); // 30
 */
export function encodeHostStatusSerial(s: HostStatusSerialSettings): number {
  const code = BAUD_CODES.find(([, baud]) => baud === s.baudRate)?.[0];
  if (code === undefined) {
    throw new DeviceProtocolError('INVALID_PARAMETER', `no ~HS baud code for ${String(s.baudRate)}`, {
      details: { baudRate: s.baudRate },
    });
  }
  let a = ((code & 0b1000) << 5) | (code & 0b0111);
  if (s.dataBits === 8) a |= 1 << 3;
  if (s.stopBits === 1) a |= 1 << 4;
  if (s.parity !== 'none') a |= 1 << 5;
  if (s.parity === 'even') a |= 1 << 6;
  if (s.handshake === 'dtr') a |= 1 << 7;
  return a;
}

/**
 * Unpacks the decimal `aaa` value of `~HS` string 1.
 *
 * @example
 * decodeHostStatusSerial(30).baudRate; // 9600
 */
export function decodeHostStatusSerial(a: number): HostStatusSerialSettings {
  const code = ((a >> 5) & 0b1000) | (a & 0b0111);
  const parityOn = (a & (1 << 5)) !== 0;
  return {
    baudRate: BAUD_CODES.find(([c]) => c === code)?.[1],
    dataBits: a & (1 << 3) ? 8 : 7,
    stopBits: a & (1 << 4) ? 1 : 2,
    parity: parityOn ? (a & (1 << 6) ? 'even' : 'odd') : 'none',
    handshake: a & (1 << 7) ? 'dtr' : 'xon/xoff',
  };
}

function encodeHostStatusFunctions(f: HostStatusFunctionSettings): number {
  return (
    (f.continuousMedia ? 0x80 : 0) |
    (f.sensorProfile ? 0x40 : 0) |
    (f.communicationsDiagnostics ? 0x20 : 0) |
    (f.thermalTransfer ? 1 : 0)
  );
}

function pad(n: number, width: number): string {
  return String(Math.max(0, Math.trunc(n))).padStart(width, '0');
}

const flag = (b: boolean): string => (b ? '1' : '0');

/**
 * Formats the three `~HS` strings exactly as the printer sends them.
 *
 * @example
 * formatHostStatus(status); // '\x02030,0,0,0400,000,0,0,0,000,0,0,0\x03\r\n\x02...'
 */
export function formatHostStatus(s: HostStatus): string {
  const one = [
    pad(encodeHostStatusSerial(s.serial), 3),
    flag(s.paperOut),
    flag(s.paused),
    pad(s.labelLengthDots, 4),
    pad(s.formatsInBuffer, 3),
    flag(s.bufferFull),
    flag(s.diagnosticMode),
    flag(s.partialFormat),
    '000',
    flag(s.corruptRam),
    flag(s.underTemperature),
    flag(s.overTemperature),
  ];
  const two = [
    pad(encodeHostStatusFunctions(s.functionSettings), 3),
    '0',
    flag(s.headUp),
    flag(s.ribbonOut),
    flag(s.thermalTransferMode),
    s.printMode,
    s.printWidthMode,
    flag(s.labelWaiting),
    pad(s.labelsRemaining, 8),
    '1',
    pad(s.graphicsStored, 3),
  ];
  const three = [s.password, flag(s.staticRam)];
  return [one, two, three].map((fields) => STX + fields.join(',') + ETX + CRLF).join('');
}

/** Field counts of the three strings, used to recognise them in a stream. */
export const HOST_STATUS_FIELD_COUNTS = [12, 11, 2] as const;

function malformed(message: string, details: Record<string, unknown>): DeviceProtocolError {
  return new DeviceProtocolError('MALFORMED_HOST_STATUS', message, { details });
}

function num(field: string | undefined, name: string): number {
  if (field === undefined || !/^\d+$/.test(field))
    throw malformed(`~HS ${name} is not a number`, { field, name });
  return Number(field);
}

function bit(field: string | undefined, name: string): boolean {
  if (field !== '0' && field !== '1') throw malformed(`~HS ${name} is not a 0/1 flag`, { field, name });
  return field === '1';
}

/**
 * Parses the `~HS` answer: either the raw text (three `<STX>...<ETX>` frames, CR LF optional) or the
 * three frame bodies. Throws `MALFORMED_HOST_STATUS` when it is not the documented shape.
 *
 * @example
 * parseHostStatus(reply).paperOut; // true when string 1 field b is 1
 */
export function parseHostStatus(reply: string | readonly string[]): HostStatus {
  const frames = typeof reply === 'string' ? splitStxEtxFrames(reply) : [...reply];
  if (frames.length !== 3) throw malformed('~HS answer must be three strings', { count: frames.length });
  const [one, two, three] = frames.map((f, i) => {
    const fields = f.split(',').map((x) => x.trim());
    if (fields.length !== HOST_STATUS_FIELD_COUNTS[i]) {
      throw malformed(`~HS string ${i + 1} must have ${HOST_STATUS_FIELD_COUNTS[i]} fields`, { frame: f });
    }
    return fields;
  }) as [string[], string[], string[]];
  const mmm = num(two[0], 'mmm');
  const printMode = (two[5] ?? '').toUpperCase();
  if (!(printMode in HOST_STATUS_PRINT_MODES)) throw malformed('~HS print mode is unknown', { printMode });
  return {
    serial: decodeHostStatusSerial(num(one[0], 'aaa')),
    paperOut: bit(one[1], 'paper out'),
    paused: bit(one[2], 'pause'),
    labelLengthDots: num(one[3], 'label length'),
    formatsInBuffer: num(one[4], 'formats in buffer'),
    bufferFull: bit(one[5], 'buffer full'),
    diagnosticMode: bit(one[6], 'diagnostic mode'),
    partialFormat: bit(one[7], 'partial format'),
    corruptRam: bit(one[9], 'corrupt RAM'),
    underTemperature: bit(one[10], 'under temperature'),
    overTemperature: bit(one[11], 'over temperature'),
    functionSettings: {
      continuousMedia: (mmm & 0x80) !== 0,
      sensorProfile: (mmm & 0x40) !== 0,
      communicationsDiagnostics: (mmm & 0x20) !== 0,
      thermalTransfer: (mmm & 1) !== 0,
    },
    headUp: bit(two[2], 'head up'),
    ribbonOut: bit(two[3], 'ribbon out'),
    thermalTransferMode: bit(two[4], 'thermal transfer'),
    printMode: printMode as HostStatusPrintMode,
    printWidthMode: two[6] ?? '',
    labelWaiting: bit(two[7], 'label waiting'),
    labelsRemaining: num(two[8], 'labels remaining'),
    graphicsStored: num(two[10], 'graphics stored'),
    password: three[0] ?? '',
    staticRam: bit(three[1], 'static RAM'),
  };
}

/**
 * Bodies of the complete `<STX>...<ETX>` frames in `text`, in order.
 *
 * @example
 * splitStxEtxFrames('\x021234,0\x03\r\n'); // ['1234,0']
 */
export function splitStxEtxFrames(text: string): string[] {
  const frames: string[] = [];
  for (let start = text.indexOf(STX); start >= 0; start = text.indexOf(STX, start + 1)) {
    const end = text.indexOf(ETX, start + 1);
    const next = text.indexOf(STX, start + 1);
    if (end < 0) break;
    if (next < 0 || end < next) frames.push(text.slice(start + 1, end));
  }
  return frames;
}
