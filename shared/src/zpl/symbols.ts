/**
 * The field data of the two GS1 symbols beyond the QR code, written and read back as a printer reads it:
 *
 * - DataMatrix, `^BXN,<h>,200,,,,<esc>` (ZPL II Programming Guide, ^BX): quality 200 is ECC 200, the only
 *   quality GS1 allows (GS1 General Specifications §5.6.3); with it the field data may carry escape
 *   sequences introduced by the escape character `<esc>` (parameter g): `<esc>1` is FNC1 (in first
 *   position it makes the symbol a GS1 DataMatrix; later, it is the GS separator), `<esc><esc>` the
 *   character itself, `<esc>dNNN` the byte NNN. The writer chooses an escape character the data does not
 *   contain, so no data character is ever read as an escape, and never wraps the field in `^FH` (whose
 *   indicator would be decoded first).
 * - GS1-128, `^BCN,<h>,N,N,N,N` (^BC) in mode N, where the field data names the subsets itself with
 *   invocation codes: `>;` start C, `>:` start B, `>9` start A, `>5`/`>6`/`>7` code C/B/A, `>8` FNC1, `>0`
 *   a `>` (value 30 in subsets A and B), `><` value 62 (`^`), `>=` value 94 (`~` in B). Mode D (UCC case
 *   mode) would be shorter to write but drops parentheses from the data, which set 82 serials may contain.
 *
 * A reader returns what the symbol will encode: whether its first codeword is FNC1 (a GS1 symbol) and its
 * data, with GS (0x1D) for every later FNC1, as a scanner transmits it after `]d2` or `]C1`.
 */
import { GS1_GROUP_SEPARATOR, gs1ElementsToRaw, type Gs1Element } from '../gs1/element-string.js';
import { DeviceProtocolError } from './errors.js';
import { assertZplFieldData } from './field-data.js';
import { ZplTokenizer } from './tokenizer.js';

/** What a symbol encodes: FNC1 first (GS1) or not, and its data with GS for every later FNC1. */
export interface ZplSymbolData {
  gs1: boolean;
  data: string;
}

/** What a DataMatrix carries: text (a Digital Link URI) or GS1 element strings. */
export type ZplDataMatrixContent = { text: string } | { gs1: readonly Gs1Element[] };

/** Escape characters the writer may choose, in order; none of them is a ZPL prefix or a parameter comma. */
const DATA_MATRIX_ESCAPES = ['_', '`', '|', '@', '#', '$', '{', '}', '[', ']', '\\'];

/** `^BX` parameter g when it is left empty (ZPL II Programming Guide, ^BX). */
const DATA_MATRIX_DEFAULT_ESCAPE = '~';

/**
 * The escape character and field data of a DataMatrix (`^BX...,<escape>^FD<fieldData>^FS`).
 *
 * @example
 * zplDataMatrixField({ gs1: [{ ai: '01', value: '10950600830521' }, { ai: '21', value: 'A_1' }] });
 * // { escape: '`', fieldData: '`1011095060083052121A_1' }
 */
export function zplDataMatrixField(content: ZplDataMatrixContent): { escape: string; fieldData: string } {
  // gs1ElementsToRaw checks every value is GS1 character set 82 (printable ASCII, never ^ or ~).
  const data =
    'text' in content ? assertZplFieldData(content.text, 'DataMatrix data') : gs1ElementsToRaw(content.gs1);
  const escape = DATA_MATRIX_ESCAPES.find((c) => !data.includes(c));
  if (escape === undefined) {
    throw new DeviceProtocolError(
      'INVALID_FIELD_DATA',
      'the DataMatrix data contains every escape character',
      {
        details: { data },
      },
    );
  }
  const fieldData =
    'text' in content ? data : escape + '1' + data.replaceAll(GS1_GROUP_SEPARATOR, escape + '1');
  return { escape, fieldData };
}

/**
 * The mode-N field data of a GS1-128 (`^BCN,...,N^FD<fieldData>^FS`): start C with FNC1, digits in pairs
 * in subset C, everything else in subset B, FNC1 for every GS.
 *
 * @example
 * zplGs1128FieldData([{ ai: '01', value: '10950600830521' }, { ai: '21', value: 'A>1' }]);
 * // '>;>8011095060083052121>6A>01'
 */
export function zplGs1128FieldData(elements: readonly Gs1Element[]): string {
  const raw = gs1ElementsToRaw(elements);
  let out = '>;>8';
  let subset: 'B' | 'C' = 'C';
  const digitRun = (i: number): number => /^\d*/.exec(raw.slice(i))![0].length;
  for (let i = 0; i < raw.length;) {
    const ch = raw[i]!;
    if (ch === GS1_GROUP_SEPARATOR) {
      out += '>8';
      i++;
      continue;
    }
    const run = digitRun(i);
    // No code switch is followed by just one last character: after a switch the data runs on at least two
    // characters or to a longer end (a pair goes in subset B instead), which costs a printer nothing and
    // keeps the symbol exact on renderers that lose a lone character after an invocation (Zebrash).
    const lone = (end: number) => raw.length - end === 1;
    if (subset === 'C') {
      if (run >= 2 && !lone(i + 2)) {
        out += raw.slice(i, i + 2);
        i += 2;
        continue;
      }
      out += '>6';
      subset = 'B';
    } else if (run >= 4 && run % 2 === 0 && !lone(i + run)) {
      // Four or more digits (an even run) are shorter in subset C, even counting the switch.
      out += '>5';
      subset = 'C';
      continue;
    }
    out += ch === '>' ? '>0' : ch;
    i++;
  }
  return out;
}

/** The format's commands, with the field each `^FD` belongs to. */
function commands(zpl: string): { name: string; params: string }[] {
  const tokens = new ZplTokenizer().push(zpl).concat(new ZplTokenizer().flush());
  return tokens.flatMap((t) => (t.kind === 'command' ? [t.command] : []));
}

/** The parameters of the first `<symbol>` field and its `^FD`, or null when the format has none. */
function firstField(zpl: string, symbol: string): { params: string[]; fd: string } | null {
  let params: string[] | null = null;
  for (const { name, params: p } of commands(zpl)) {
    if (name === symbol) params = p.split(',');
    else if (name === 'FD' && params) return { params, fd: p };
    else if (name === 'FS') params = null;
    else if (name === 'FH' && params) {
      throw new DeviceProtocolError('INVALID_FIELD_DATA', `^FH in a ^${symbol} field is not read here`);
    }
  }
  return null;
}

/**
 * What the first `^BX` (DataMatrix) field of a format encodes, or null when it has none.
 *
 * @example
 * zplDataMatrixData('^XA^FO10,10^BXN,4,200,,,,_^FD_1011095060083052121A1^FS^XZ');
 * // { gs1: true, data: '011095060083052121A1' }
 */
export function zplDataMatrixData(zpl: string): ZplSymbolData | null {
  const field = firstField(zpl, 'BX');
  if (!field) return null;
  if ((field.params[2] ?? '') !== '200') {
    throw new DeviceProtocolError('INVALID_PARAMETER', '^BX is read only with quality 200 (ECC 200)', {
      details: { params: field.params.join(',') },
    });
  }
  const esc = field.params[6] || DATA_MATRIX_DEFAULT_ESCAPE;
  const fd = field.fd;
  let data = '';
  let gs1 = false;
  for (let i = 0; i < fd.length; i++) {
    const ch = fd[i]!;
    if (ch !== esc) {
      data += ch;
      continue;
    }
    const next = fd[i + 1];
    if (next === '1') {
      if (i === 0) gs1 = true;
      else data += GS1_GROUP_SEPARATOR;
      i++;
    } else if (next === esc) {
      data += esc;
      i++;
    } else if (next === 'd' && /^\d{3}$/.test(fd.slice(i + 2, i + 5))) {
      data += String.fromCharCode(Number(fd.slice(i + 2, i + 5)));
      i += 4;
    } else {
      throw new DeviceProtocolError('INVALID_FIELD_DATA', `^BX escape ${esc}${next ?? ''} is not read here`, {
        details: { at: i },
      });
    }
  }
  return { gs1, data };
}

/** What a mode-N `^BC` field encodes, and how many symbol characters (start and check included) it takes. */
export interface ZplCode128Data extends ZplSymbolData {
  symbolChars: number;
}

/**
 * What the first `^BC` (Code 128) field of a format encodes, or null when it has none. Only mode N is
 * read (the mode the writer uses), with the invocation codes listed above.
 *
 * @example
 * zplGs1128Data('^XA^BCN,80,N,N,N,N^FD>;>8011095060083052121>6A>01^FS^XZ');
 * // { gs1: true, data: '011095060083052121A>1', symbolChars: 17 }
 */
export function zplGs1128Data(zpl: string): ZplCode128Data | null {
  const field = firstField(zpl, 'BC');
  if (!field) return null;
  const mode = field.params[5] || 'N';
  if (mode !== 'N') {
    throw new DeviceProtocolError('INVALID_PARAMETER', `^BC mode ${mode} is not read here, only mode N`, {
      details: { params: field.params.join(',') },
    });
  }
  return readCode128ModeN(field.fd);
}

function readCode128ModeN(fd: string): ZplCode128Data {
  const bad = (why: string): never => {
    throw new DeviceProtocolError('INVALID_FIELD_DATA', `^BC field data: ${why}`, { details: { fd } });
  };
  const starts: Record<string, 'A' | 'B' | 'C'> = { '>9': 'A', '>:': 'B', '>;': 'C' };
  let subset: 'A' | 'B' | 'C' = starts[fd.slice(0, 2)] ?? 'B';
  let i = starts[fd.slice(0, 2)] ? 2 : 0;
  let chars = 1; // the start character
  let data = '';
  let gs1 = false;
  while (i < fd.length) {
    const first = chars === 1;
    chars++;
    if (fd[i] === '>') {
      const code = fd[i + 1];
      i += 2;
      if (code === '8') {
        if (first) gs1 = true;
        else data += GS1_GROUP_SEPARATOR;
      } else if (code === '5' || code === '6' || code === '7') {
        subset = code === '5' ? 'C' : code === '6' ? 'B' : 'A';
      } else if (subset !== 'C' && code === '0') data += '>';
      else if (subset !== 'C' && code === '<') data += '^';
      else if (subset === 'B' && code === '=') data += '~';
      else bad(`invocation >${code ?? ''} is not read here in subset ${subset}`);
      continue;
    }
    if (subset === 'C') {
      const pair = fd.slice(i, i + 2);
      if (!/^\d\d$/.test(pair)) bad(`subset C takes digits in pairs, not ${JSON.stringify(pair)}`);
      data += pair;
      i += 2;
      continue;
    }
    const ch = fd[i]!;
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code > 0x7e || (subset === 'A' && code > 0x5f)) {
      bad(`${JSON.stringify(ch)} is not in subset ${subset}`);
    }
    data += ch;
    i++;
  }
  if (chars === 1) bad('it is empty');
  return { gs1, data, symbolChars: chars + 1 }; // + the check character
}

/** ECC 200 square symbols: modules per side and data codewords (ISO/IEC 16022 Table 7). */
const DATA_MATRIX_SQUARES: readonly [number, number][] = [
  [10, 3],
  [12, 5],
  [14, 8],
  [16, 12],
  [18, 18],
  [20, 22],
  [22, 30],
  [24, 36],
  [26, 44],
  [32, 62],
  [36, 86],
  [40, 114],
  [44, 144],
  [48, 174],
  [52, 204],
  [64, 280],
  [72, 368],
  [80, 456],
  [88, 576],
  [96, 696],
  [104, 816],
  [120, 1050],
  [132, 1304],
  [144, 1558],
];

/**
 * Modules per side of the square ECC 200 symbol for `symbol` in ASCII encodation (ISO/IEC 16022 §5.2.3:
 * a digit pair or a character one codeword, FNC1 one, a byte above 127 two). An encoder that switches to
 * C40 or Text may draw a smaller one; never a larger one, so a layout made with this size holds.
 *
 * @example
 * dataMatrixModules({ gs1: true, data: '011095060083052121A1' }); // 16
 */
export function dataMatrixModules(symbol: ZplSymbolData): number {
  let codewords = symbol.gs1 ? 1 : 0;
  const d = symbol.data;
  for (let i = 0; i < d.length;) {
    const pair = /^\d\d/.test(d.slice(i, i + 2));
    codewords += !pair && d.charCodeAt(i) > 127 ? 2 : 1;
    i += pair ? 2 : 1;
  }
  const size = DATA_MATRIX_SQUARES.find(([, cap]) => cap >= codewords);
  if (!size) throw new DeviceProtocolError('INVALID_FIELD_DATA', 'too much data for a DataMatrix');
  return size[0];
}

/** Modules of a Code 128 symbol of `symbolChars` characters, with its stop and 10-module quiet zones. */
export function code128Modules(symbolChars: number): number {
  return symbolChars * 11 + 13 + 20;
}
