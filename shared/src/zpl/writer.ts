/**
 * A small ZPL writer for the labels the device agent prints: text, a QR code, and an RFID EPC write
 * with read-back. Every method validates its input, so a label that leaves the writer reaches the
 * printer intact (ZPL II Programming Guide command references cited per method).
 */
import { DeviceProtocolError } from './errors.js';
import { assertZplFieldData } from './field-data.js';
import { DEFAULT_HEX_INDICATOR, encodeFieldHex } from './field-hex.js';
import type { Gs1Element } from '../gs1/element-string.js';
import { zplDataMatrixField, zplGs1128FieldData, type ZplDataMatrixContent } from './symbols.js';

/** Immediate host queries and controls (tilde commands act as soon as they arrive). */
export const ZPL_QUERY_HOST_STATUS = '~HS';
export const ZPL_QUERY_ERROR_STATUS = '~HQES';
export const ZPL_PAUSE = '~PP';
export const ZPL_RESUME = '~PS';
export const ZPL_CANCEL_ALL = '~JA';

/** QR error correction levels of the `^FD` switches of `^BQ`: H 30%, Q 25%, M 15%, L 7%. */
export type QrErrorCorrection = 'H' | 'Q' | 'M' | 'L';

/**
 * `^RS` parameter `e`, what the printer does once every try to encode a tag has failed
 * (ZPL II Programming Guide, ^RS "error handling"):
 * - `N`: no action. The printer drops the label format that caused the error and moves on to the
 *   next one. The host is told nothing except by reading the tag back; this is the factory default,
 *   which is why the writer never leaves `e` empty.
 * - `P`: place the printer in Pause mode. The label format stays in the buffer until the pause is
 *   released (`~PS` or the PAUSE key), then it is tried again.
 * - `E`: place the printer in Error mode. The label format stays in the buffer until the operator
 *   clears the error.
 * Every failed try prints `VOID` on its label and uses it up (parameter `v`, void print length).
 */
export type RfidErrorHandling = 'N' | 'P' | 'E';

/** Options of a text field (`^A` scalable font). */
export interface ZplTextOptions {
  /** Character height in dots (10 to 32000). */
  height: number;
  /** Character width in dots; defaults to the height. */
  width?: number;
  /** Font name, `0` (the scalable font) by default. */
  font?: string;
}

/** Options of a QR code field (`^BQ`). */
export interface ZplQrOptions {
  /** Module size in dots, 1 to 10; default 4. */
  magnification?: number;
  /** Error correction level; default `M`. */
  errorCorrection?: QrErrorCorrection;
}

/** Options of `^RS`, the RFID setup command. */
export interface ZplRfidSetupOptions {
  /** Number of labels tried before the error handling applies (`^RS` `n`, 1 to 10). */
  tries: number;
  /** What happens when every try failed; see {@link RfidErrorHandling}. No default on purpose. */
  onError: RfidErrorHandling;
  /** Tag type (`^RS` `t`); 8 is EPC Class 1 Generation 2, the only one supported here. */
  tagType?: 8;
  /** Length of the VOID printout in dot rows (`^RS` `v`); the printer's default when omitted. */
  voidLengthDots?: number;
}

/** Options of the EPC read-back (`^RFR` into a numbered field, returned by `^HV`). */
export interface ZplReadBackOptions {
  /** Field number (`^FN`) the read lands in and `^HV` returns; default 1. */
  field?: number;
  /** Text the printer sends before the data; default `EPC:`. */
  header?: string;
  /** Text the printer sends after the data; default CR LF. */
  terminator?: string;
  /** Most characters of data returned (`^HV` `n`, 1 to 256); default 24 (a 96-bit EPC in hex). */
  maxBytes?: number;
  /** `L`: one answer per label printed, VOID ones included; `F`: one per label format. Default `L`. */
  appliesTo?: 'F' | 'L';
  /**
   * Bytes of EPC read (`^RFR` `n`); default 12 (96 bits), read from the 96-bit `E` bank. Any other length is
   * read from word 2 of EPC memory (bank `1`), as {@link ZplLabelBuilder.writeEpc} writes it.
   */
  epcBytes?: number;
}

/**
 * The NFC tag's read-back (`^RT` into a numbered field, returned by `^HV`), the HF counterpart of
 * {@link ZplReadBackOptions}.
 */
export interface ZplNfcReadBackOptions {
  /** Field number the read lands in (`^RT` `#`) and `^HV` returns; default 2. */
  field?: number;
  /** Text the printer sends before the data; default `NFC:`. */
  header?: string;
  /** Text the printer sends after the data; default CR LF. */
  terminator?: string;
  /** `L`: one answer per label printed, VOID ones included; `F`: one per label format. Default `L`. */
  appliesTo?: 'F' | 'L';
}

/** The NFC read-back defaults, shared by the writer and {@link ZplResponseParser}. */
export const ZPL_NFC_READ_BACK = {
  field: 2,
  header: 'NFC:',
  terminator: '\r\n',
  appliesTo: 'L',
} as const satisfies Required<ZplNfcReadBackOptions>;

/**
 * Where the NDEF data starts on an NFC Forum Type 2 tag: block (page) 4 of 4 bytes, after the UID, the lock
 * bytes and the capability container (Type 2 Tag Operation Specification §2.1).
 */
export const NFC_TYPE2_FIRST_DATA_BLOCK = 4;
/** Bytes per block of a Type 2 tag, the unit `^WT` and `^RT` address. */
export const NFC_TYPE2_BLOCK_BYTES = 4;
/** Most blocks one read-back returns: `^HV` sends at most 256 characters, 8 hex digits a block. */
export const NFC_MAX_READ_BACK_BLOCKS = 32;

/** The read-back defaults, shared by the writer and {@link ZplResponseParser}. */
export const ZPL_DEFAULT_READ_BACK = {
  field: 1,
  header: 'EPC:',
  terminator: '\r\n',
  maxBytes: 24,
  appliesTo: 'L',
  epcBytes: 12,
} as const satisfies Required<ZplReadBackOptions>;

function int(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new DeviceProtocolError('INVALID_PARAMETER', `${name} must be an integer from ${min} to ${max}`, {
      details: { name, value },
    });
  }
  return value;
}

/**
 * Normalises an EPC given in hex: whole 16-bit words (Gen2 memory is word-addressed), 16 to 496 bits.
 *
 * @example
 * normalizeEpcHexWords('30764433400d1ec000000002'); // '30764433400D1EC000000002'
 */
export function normalizeEpcHexWords(hex: string): string {
  if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length % 4 !== 0 || hex.length < 4 || hex.length > 124) {
    throw new DeviceProtocolError(
      'INVALID_EPC_HEX',
      'EPC must be hex digits in whole 16-bit words (4 to 124 digits)',
      { details: { hex } },
    );
  }
  return hex.toUpperCase();
}

/**
 * The Gen2 StoredPC word announcing an EPC of this many hex digits: the EPC length in words in bits 15..11
 * (EPC UHF Gen2 Air Interface Protocol §6.3.2.1.2.2), everything else 0 (no user memory indicator, no XPC,
 * a GS1 EPC: toggle bit 0). 96 bits: `3000`; SGTIN-198 (208 bits, 13 words): `6800`.
 *
 * @example
 * epcPcWord('3'.repeat(52)); // '6800'
 */
export function epcPcWord(epcHex: string): string {
  const words = normalizeEpcHexWords(epcHex).length / 4;
  return ((words << 11) & 0xffff).toString(16).toUpperCase().padStart(4, '0');
}

/**
 * Builds one label format. Methods append commands in call order; {@link toString} closes it.
 *
 * @example
 * const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
 *   .rfidSetup({ tries: 3, onError: 'E' })
 *   .qr(20, 20, 'https://id.example.com/01/09506000134352/21/2', { magnification: 5 })
 *   .text(20, 320, 'SN 2', { height: 30 })
 *   .writeEpc('30764433400D1EC000000002')
 *   .readBackEpc()
 *   .toString();
 */
export class ZplLabelBuilder {
  private readonly lines: string[] = ['^XA'];
  private readonly utf8: boolean;

  /**
   * `^PW` print width and `^LL` label length, both in dots. With `utf8`, the format selects UTF-8
   * (`^CI28`, ZPL II Programming Guide, ^CI) and text fields may carry any Unicode text: the finished
   * format is then sent as UTF-8 bytes.
   */
  constructor(size?: { widthDots: number; lengthDots: number; utf8?: boolean }) {
    this.utf8 = size?.utf8 ?? false;
    if (size) {
      this.lines.push(`^PW${int('widthDots', size.widthDots, 2, 32000)}`);
      this.lines.push(`^LL${int('lengthDots', size.lengthDots, 1, 32000)}`);
    }
    if (this.utf8) this.lines.push('^CI28');
  }

  /**
   * A text field: `^FOx,y^A0N,h,w^FD<text>^FS`. In a UTF-8 format the data travels `^FH`-encoded
   * (`^FOx,y^A0N,h,w^FH_^FD<text>^FS`): `^`, `~`, `_`, `,` and control characters as `_XX`, everything
   * else as it is; otherwise it must be printable ASCII without `^` and `~`.
   */
  text(x: number, y: number, text: string, options: ZplTextOptions): this {
    const font = options.font ?? '0';
    if (!/^[A-Z0-9]$/.test(font)) {
      throw new DeviceProtocolError('INVALID_PARAMETER', 'font must be one letter or digit', {
        details: { font },
      });
    }
    const h = int('height', options.height, 10, 32000);
    const w = int('width', options.width ?? options.height, 10, 32000);
    if (this.utf8) {
      if (text.length === 0) throw new DeviceProtocolError('INVALID_FIELD_DATA', 'field data is empty');
      const data = encodeFieldHex(text, DEFAULT_HEX_INDICATOR);
      this.lines.push(`${origin(x, y)}^A${font}N,${h},${w}^FH${DEFAULT_HEX_INDICATOR}^FD${data}^FS`);
      return this;
    }
    this.lines.push(`${origin(x, y)}^A${font}N,${h},${w}^FD${assertZplFieldData(text)}^FS`);
    return this;
  }

  /**
   * A QR code: `^FOx,y^BQN,2,<mag>^FD<ecl>A,<data>^FS` (ZPL II Programming Guide, ^BQ). The field
   * data starts with the switches, error correction level then input mode (`A`, automatic), then a
   * comma: without them the printer reads the first characters of the data as switches and drops them.
   */
  qr(x: number, y: number, data: string, options: ZplQrOptions = {}): this {
    const mag = int('magnification', options.magnification ?? 4, 1, 10);
    const ecl = options.errorCorrection ?? 'M';
    if (!['H', 'Q', 'M', 'L'].includes(ecl)) {
      throw new DeviceProtocolError('INVALID_PARAMETER', 'errorCorrection must be H, Q, M or L', {
        details: { ecl },
      });
    }
    this.lines.push(`${origin(x, y)}^BQN,2,${mag}^FD${ecl}A,${assertZplFieldData(data, 'QR data')}^FS`);
    return this;
  }

  /**
   * A DataMatrix: `^FOx,y^BXN,<module>,200,,,,<esc>^FD<data>^FS` (ZPL II Programming Guide, ^BX), ECC 200
   * with an escape character the data does not contain; GS1 element strings start with FNC1 (`<esc>1`)
   * and have FNC1 after each variable-length value but the last (see `symbols.ts`).
   */
  dataMatrix(x: number, y: number, content: ZplDataMatrixContent, options: { moduleDots: number }): this {
    const h = int('moduleDots', options.moduleDots, 1, 32000);
    const { escape, fieldData } = zplDataMatrixField(content);
    this.lines.push(`${origin(x, y)}^BXN,${h},200,,,,${escape}^FD${fieldData}^FS`);
    return this;
  }

  /**
   * A GS1-128: `^FOx,y^BY<module>^BCN,<height>,N,N,N,N^FD<data>^FS` (^BY, ^BC mode N with FNC1 first and
   * explicit subsets, see `symbols.ts`). No interpretation line: the printer would print the data without
   * the parentheses of the AIs, so the caller prints the human-readable text itself.
   */
  gs1128(
    x: number,
    y: number,
    elements: readonly Gs1Element[],
    options: { moduleDots: number; heightDots: number },
  ): this {
    const m = int('moduleDots', options.moduleDots, 1, 10);
    const h = int('heightDots', options.heightDots, 1, 32000);
    this.lines.push(`${origin(x, y)}^BY${m}^BCN,${h},N,N,N,N^FD${zplGs1128FieldData(elements)}^FS`);
    return this;
  }

  /** `^RS8,,<v>,<tries>,<onError>`: RFID setup; see {@link RfidErrorHandling} for `onError`. */
  rfidSetup(options: ZplRfidSetupOptions): this {
    const tries = int('tries', options.tries, 1, 10);
    if (!['N', 'P', 'E'].includes(options.onError)) {
      throw new DeviceProtocolError('INVALID_PARAMETER', 'onError must be N, P or E', {
        details: { onError: options.onError },
      });
    }
    const v =
      options.voidLengthDots === undefined
        ? ''
        : String(int('voidLengthDots', options.voidLengthDots, 0, 32000));
    this.lines.push(`^RS${options.tagType ?? 8},,${v},${tries},${options.onError}`);
    return this;
  }

  /**
   * Writes the EPC. A 96-bit EPC: `^RFW,H^FD<hex>^FS` (memory bank E, the 96 bits from bit 32, after CRC and
   * PC). Any other length cannot go through bank E, which Zebra printers limit to 96 bits: the PC word is
   * written first with the new length, then the EPC from word 2 of EPC memory (bank 1), as Zebra's
   * "Defining the size of the EPC data" (article 13697305) does for longer EPCs:
   * `^RFW,H,1,2,1^FD6800^FS^RFW,H,2,26,1^FD<52 hex digits>^FS` for an SGTIN-198.
   */
  writeEpc(epcHex: string): this {
    const hex = normalizeEpcHexWords(epcHex);
    if (hex.length === 24) {
      this.lines.push(`^RFW,H^FD${hex}^FS`);
      return this;
    }
    this.lines.push(`^RFW,H,1,2,1^FD${epcPcWord(hex)}^FS`);
    this.lines.push(`^RFW,H,2,${hex.length / 2},1^FD${hex}^FS`);
    return this;
  }

  /**
   * Reads the EPC back into field `field` and asks for it with `^HV`:
   * `^RFR,H,0,12,E^FN1^FS^FH_^HV1,24,EPC:,_0D_0A,L^FS` for 96 bits; another length from word 2 of bank 1,
   * e.g. `^RFR,H,2,26,1^FN1^FS^FH_^HV1,52,EPC:,_0D_0A,L^FS` for an SGTIN-198. The printer answers
   * `<header><data><terminator>` (see {@link formatHostVerification}); header and terminator travel
   * `^FH`-encoded.
   */
  readBackEpc(options: ZplReadBackOptions = {}): this {
    const o = { ...ZPL_DEFAULT_READ_BACK, ...options };
    const field = int('field', o.field, 0, 9999);
    const bytes = int('epcBytes', o.epcBytes, 2, 62);
    if (bytes % 2 !== 0) {
      throw new DeviceProtocolError('INVALID_PARAMETER', 'epcBytes must be whole 16-bit words', {
        details: { epcBytes: bytes },
      });
    }
    const n = int('maxBytes', options.maxBytes ?? bytes * 2, 1, 256);
    this.lines.push(bytes === 12 ? `^RFR,H,0,12,E^FN${field}^FS` : `^RFR,H,2,${bytes},1^FN${field}^FS`);
    this.lines.push(hostVerification(field, n, o.header, o.terminator, o.appliesTo));
    return this;
  }

  /**
   * Writes `data` to the NFC (HF) tag from block `block` (default 4, the first data block of a Type 2 tag),
   * padded with zeros to whole 4-byte blocks: `^WT4,0,1,0,1,N^FD<hex>^FS`. `^WTb,r,m,w,f,v` is ZPL's
   * block-addressed write of HF tags (block, retries 0 — the `^RS` tries apply —, motion 1: no feed of its
   * own, write protect 0, format 1: hex, verify N). ZPL has no command for an NFC encoder beside a UHF one;
   * on this floor `^WT`/`^RT` go to the HF encoder and `^RF` to the UHF one (docs/device-protocol.md).
   */
  writeNfcTag(data: Uint8Array, block: number = NFC_TYPE2_FIRST_DATA_BLOCK): this {
    const b = int('block', block, 0, 255);
    if (data.length === 0) throw new DeviceProtocolError('INVALID_FIELD_DATA', 'NFC tag data is empty');
    const padded = new Uint8Array(Math.ceil(data.length / NFC_TYPE2_BLOCK_BYTES) * NFC_TYPE2_BLOCK_BYTES);
    padded.set(data);
    const hexData = Array.from(padded, (x) => x.toString(16).padStart(2, '0'))
      .join('')
      .toUpperCase();
    this.lines.push(`^WT${b},0,1,0,1,N^FD${hexData}^FS`);
    return this;
  }

  /**
   * Reads `blocks` blocks of the NFC tag from `block` back into field `field` and asks for them with `^HV`:
   * `^RT2,4,<blocks>,1,0,1^FS^FH_^HV2,<8 x blocks>,NFC:,_0D_0A,L^FS` (`^RT#,b,n,f,r,m`: field, block,
   * count, hex, no retries, no feed). At most {@link NFC_MAX_READ_BACK_BLOCKS} blocks fit one answer.
   */
  readBackNfcTag(blocks: number, options: ZplNfcReadBackOptions & { block?: number } = {}): this {
    const o = { ...ZPL_NFC_READ_BACK, ...options };
    const field = int('field', o.field, 0, 9999);
    const count = int('blocks', blocks, 1, NFC_MAX_READ_BACK_BLOCKS);
    const b = int('block', options.block ?? NFC_TYPE2_FIRST_DATA_BLOCK, 0, 255);
    this.lines.push(`^RT${field},${b},${count},1,0,1^FS`);
    this.lines.push(hostVerification(field, count * 8, o.header, o.terminator, o.appliesTo));
    return this;
  }

  /** The finished format, one field per line, ending with `^XZ`. */
  toString(): string {
    return [...this.lines, '^XZ'].join('\n');
  }
}

/** `^FH_^HV#,n,h,t,a^FS`, header and terminator `^FH`-encoded. */
function hostVerification(field: number, n: number, header: string, terminator: string, a: string): string {
  if (a !== 'F' && a !== 'L') {
    throw new DeviceProtocolError('INVALID_PARAMETER', 'appliesTo must be F or L', {
      details: { appliesTo: a },
    });
  }
  if (header.length > 3072 || terminator.length > 3072) {
    throw new DeviceProtocolError('INVALID_PARAMETER', 'header and terminator are at most 3072 characters');
  }
  const hex = (s: string): string => encodeFieldHex(s, DEFAULT_HEX_INDICATOR);
  return `^FH${DEFAULT_HEX_INDICATOR}^HV${field},${n},${hex(header)},${hex(terminator)},${a}^FS`;
}

function origin(x: number, y: number): string {
  return `^FO${int('x', x, 0, 32000)},${int('y', y, 0, 32000)}`;
}
