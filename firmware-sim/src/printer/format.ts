/**
 * Reads one label format (the commands between `^XA` and `^XZ`) into fields. A field is every
 * command up to its `^FS`; commands that set up the whole label (`^PW`, `^LL`, `^RS`, ...) stand
 * alone when they come between fields.
 */
import { decodeFieldHex, splitZplParams, type RfidErrorHandling, type ZplCommand } from '@dpp/shared';

export type FieldKind = 'text' | 'qr' | 'barcode' | 'graphic' | 'rfid' | 'nfc' | 'hostVerification';

/** `^HV#,n,h,t,a` (ZPL II Programming Guide, ^HV); `h` and `t` already `^FH`-decoded. */
export interface HostVerificationRequest {
  field: number;
  maxBytes: number;
  header: string;
  terminator: string;
  appliesTo: 'F' | 'L';
}

export interface LabelField {
  kind: FieldKind;
  commands: ZplCommand[];
  /** Field data with `^FH` escapes decoded. */
  data: string | undefined;
  fieldNumber: number | undefined;
  /** The `^RF` parameters of an RFID field. */
  rfidParams: string | undefined;
  /** The `^WT` (write) or `^RT` (read) of an NFC field, with its parameters. */
  nfc: { command: 'WT' | 'RT'; params: string } | undefined;
  hostVerification: HostVerificationRequest | undefined;
}

/** `^RSt,p,v,n,e` (ZPL II Programming Guide, ^RS). */
export interface RfidSetup {
  tagType: string;
  voidLengthDots: number | undefined;
  tries: number;
  onError: RfidErrorHandling;
}

export type FormatItem = { kind: 'field'; field: LabelField } | { kind: 'command'; command: ZplCommand };

export interface LabelFormat {
  items: FormatItem[];
  printWidthDots: number | undefined;
  labelLengthDots: number | undefined;
  rfidSetup: Partial<RfidSetup> | undefined;
  /**
   * `^CI28` selected UTF-8: field data bytes are UTF-8. The simulator reads the line as latin1 (one char
   * per byte), so such data is decoded once more where it is shown (`fieldText`, the rendered label).
   */
  utf8: boolean;
}

/** The text a field prints: its data, decoded as UTF-8 when the format selected `^CI28`. */
export function fieldText(format: Pick<LabelFormat, 'utf8'>, data: string): string {
  return format.utf8 ? Buffer.from(data, 'latin1').toString('utf8') : data;
}

/** Commands that set up the label rather than belong to a field. */
const LABEL_LEVEL = new Set([
  'PW',
  'LL',
  'LH',
  'LS',
  'LT',
  'RS',
  'CI',
  'PQ',
  'FX',
  'MM',
  'MN',
  'MD',
  'PR',
  'PO',
  'BY',
  'CF',
  'FW',
  'JU',
  'MT',
]);

export function interpretFormat(commands: readonly ZplCommand[]): LabelFormat {
  const format: LabelFormat = {
    items: [],
    printWidthDots: undefined,
    labelLengthDots: undefined,
    rfidSetup: undefined,
    utf8: false,
  };
  let field: { commands: ZplCommand[] } | null = null;
  for (const cmd of commands) {
    if (cmd.prefix !== '^' || cmd.name === 'XA' || cmd.name === 'XZ') continue;
    if (cmd.name === 'FS') {
      if (field) format.items.push({ kind: 'field', field: readField([...field.commands, cmd]) });
      field = null;
      continue;
    }
    if (!field && LABEL_LEVEL.has(cmd.name)) {
      applyLabelCommand(format, cmd);
      format.items.push({ kind: 'command', command: cmd });
      continue;
    }
    field ??= { commands: [] };
    field.commands.push(cmd);
  }
  if (field) format.items.push({ kind: 'field', field: readField(field.commands) });
  return format;
}

function applyLabelCommand(format: LabelFormat, cmd: ZplCommand): void {
  const [first = ''] = splitZplParams(cmd.params);
  if (cmd.name === 'PW' && /^\d+$/.test(first)) format.printWidthDots = Number(first);
  if (cmd.name === 'LL' && /^\d+$/.test(first)) format.labelLengthDots = Number(first);
  if (cmd.name === 'RS') format.rfidSetup = readRfidSetup(cmd.params);
  // ^CIa: 28 is UTF-8; any other character set ends it (29 and 30, UTF-16, are not simulated).
  if (cmd.name === 'CI') format.utf8 = first.trim() === '28';
}

function readRfidSetup(params: string): Partial<RfidSetup> {
  const [t = '', , v = '', n = '', e = ''] = splitZplParams(params).map((p) => p.trim().toUpperCase());
  const setup: Partial<RfidSetup> = {};
  if (t) setup.tagType = t;
  if (/^\d+$/.test(v)) setup.voidLengthDots = Number(v);
  if (/^\d+$/.test(n)) setup.tries = Math.min(10, Math.max(1, Number(n)));
  if (e === 'N' || e === 'P' || e === 'E') setup.onError = e;
  return setup;
}

function readField(commands: ZplCommand[]): LabelField {
  let kind: FieldKind = 'text';
  let rawData: string | undefined;
  let hexIndicator: string | undefined;
  let fieldNumber: number | undefined;
  let rfidParams: string | undefined;
  let nfc: LabelField['nfc'];
  let hv: string | undefined;
  for (const cmd of commands) {
    const n = cmd.name;
    if (n === 'FD' || n === 'FV') rawData = cmd.params;
    else if (n === 'FH') hexIndicator = cmd.params.charAt(0) || '_';
    else if (n === 'FN') fieldNumber = /^\d+/.test(cmd.params) ? parseInt(cmd.params, 10) : undefined;
    else if (n === 'BQ') kind = 'qr';
    else if (n === 'RF') {
      kind = 'rfid';
      rfidParams = cmd.params;
    } else if (n === 'WT' || n === 'RT') {
      // ^RT#,b,n,...: the read lands in field # (ZPL II Programming Guide, ^RT).
      kind = 'nfc';
      nfc = { command: n, params: cmd.params };
      if (n === 'RT') fieldNumber = /^\d+/.test(cmd.params) ? parseInt(cmd.params, 10) : 0;
    } else if (n === 'HV') {
      kind = 'hostVerification';
      hv = cmd.params;
    } else if (n.startsWith('B') && kind === 'text') kind = 'barcode';
    else if (n.startsWith('G') && kind === 'text') kind = 'graphic';
  }
  const decode = (s: string): string => (hexIndicator === undefined ? s : decodeFieldHex(s, hexIndicator));
  return {
    kind,
    commands,
    data: rawData === undefined ? undefined : decode(rawData),
    fieldNumber,
    rfidParams,
    nfc,
    hostVerification: hv === undefined ? undefined : readHostVerification(hv, decode),
  };
}

function readHostVerification(params: string, decode: (s: string) => string): HostVerificationRequest {
  const [f = '', n = '', h = '', t = '', a = ''] = splitZplParams(params);
  return {
    field: /^\d+$/.test(f.trim()) ? Number(f) : 0,
    maxBytes: /^\d+$/.test(n.trim()) ? Math.min(256, Math.max(1, Number(n))) : 64,
    header: decode(h),
    terminator: decode(t),
    appliesTo: a.trim().toUpperCase() === 'L' ? 'L' : 'F',
  };
}

/** The QR field data split into its switches (`MA`) and the data proper. */
export function splitQrData(data: string): { switches: string; payload: string } | null {
  const m = /^([HQML][AM]),(.*)$/s.exec(data);
  return m ? { switches: m[1] ?? '', payload: m[2] ?? '' } : null;
}
