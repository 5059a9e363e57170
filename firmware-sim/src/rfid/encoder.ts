/**
 * The RFID encoder of the printer: runs the `^RF` fields of a label format against the tag under
 * the label (ZPL II Programming Guide, ^RF `^RFo,f,b,n,m`: operation W/R, format H (hex) or A
 * (ASCII), starting block, byte count, memory bank E/0/1/2/3). Bank `E` is the 96-bit EPC from bit 32,
 * i.e. word 2 of EPC memory, after StoredCRC and StoredPC: a write there sets the PC to 96 bits, shorter
 * data is padded with zeros and longer data refused (Zebra article 11855679: bank E "is limited to 96bits").
 * A longer EPC goes through bank 1: its PC word at word 1, then the EPC from word 2 (Zebra article 13697305).
 */
import { splitZplParams } from '@dpp/shared';
import type { SimLogger } from '../log.js';
import { Gen2Tag, hex, type MemoryBank } from './tag.js';

/** A `^RF` field of a format. */
export interface RfidField {
  /** `^RF` parameter text, e.g. `W,H` or `R,H,0,12,E`. */
  params: string;
  /** Field data (`^FD`) of a write. */
  data?: string;
  /** Field number (`^FN`) a read lands in. */
  fieldNumber?: number;
}

/** What running the fields against one tag gave. */
export interface EncodeResult {
  /** Every write succeeded. */
  ok: boolean;
  /** Read results by field number. */
  reads: Map<number, string>;
}

interface Parsed {
  operation: string;
  format: string;
  block: number | undefined;
  bytes: number | undefined;
  bank: string;
}

function parse(params: string): Parsed {
  const [o = '', f = 'H', b = '', n = '', m = 'E'] = splitZplParams(params).map((p) =>
    p.trim().toUpperCase(),
  );
  return {
    operation: o,
    format: f || 'H',
    block: b === '' ? undefined : Number(b),
    bytes: n === '' ? undefined : Number(n),
    bank: m || 'E',
  };
}

const BANKS: Record<string, MemoryBank> = { '0': 'reserved', '1': 'epc', '2': 'tid', '3': 'user', E: 'epc' };

export class RfidEncoder {
  private tags = 0;

  /** `tagEpcBits`: the EPC memory of the inlays on the roll (see {@link Gen2Tag}). */
  constructor(
    private readonly log: SimLogger,
    private readonly tagEpcBits?: number,
  ) {
    new Gen2Tag(0, tagEpcBits); // refuses a roll no tag could be, before the first label
  }

  /** The inlay of the next label on the roll. */
  nextTag(): Gen2Tag {
    return new Gen2Tag(++this.tags, this.tagEpcBits);
  }

  /**
   * Runs the fields in order. With `failWrites` (the void-tag fault) every write fails and leaves
   * the tag as it was; reads still answer with what the tag holds.
   */
  encode(tag: Gen2Tag, fields: readonly RfidField[], failWrites: boolean): EncodeResult {
    const reads = new Map<number, string>();
    let ok = true;
    for (const field of fields) {
      const op = parse(field.params);
      const bank = BANKS[op.bank];
      if (!bank || !['H', 'A'].includes(op.format) || (op.operation !== 'W' && op.operation !== 'R')) {
        this.log.warn('unsupported ^RF field ignored', { params: field.params });
        continue;
      }
      const wordOffset = (op.bank === 'E' ? 2 : 0) + (op.block ?? 0);
      try {
        if (op.operation === 'W') {
          if (failWrites) throw new Error('tag did not answer the write');
          const data = toBytes(field.data ?? '', op.format, op.bytes);
          if (op.bank === 'E' && (op.block ?? 0) === 0) tag.writeEpc(epc96(data));
          else tag.write(bank, wordOffset, data);
        } else {
          const count =
            op.bytes ?? (op.bank === 'E' ? tag.epcLengthWords * 2 : tag.bankSize(bank) - wordOffset * 2);
          const bytes = tag.read(bank, wordOffset, count);
          if (field.fieldNumber !== undefined) {
            reads.set(
              field.fieldNumber,
              op.format === 'A' ? Buffer.from(bytes).toString('latin1') : hex(bytes),
            );
          }
        }
      } catch (err) {
        if (op.operation === 'W') ok = false;
        this.log.info('RFID operation failed', {
          params: field.params,
          err: (err as Error).message,
          tag: tag.serial,
        });
      }
    }
    return { ok, reads };
  }
}

/** What bank E takes: 96 bits, zero-padded; more is refused. */
function epc96(data: Uint8Array): Uint8Array {
  if (data.length > 12) throw new Error(`bank E holds 96 bits, not ${data.length * 8}`);
  const out = new Uint8Array(12);
  out.set(data);
  return out;
}

/**
 * The EPC a format asks to write: the data of its write to bank E, or to word 2 of bank 1; null if none.
 *
 * @example
 * epcWriteOf([{ params: 'W,H,1,2,1', data: '6800' }, { params: 'W,H,2,26,1', data: '36…' }]); // '36…'
 */
export function epcWriteOf(fields: readonly RfidField[]): string | null {
  for (const f of fields) {
    const op = parse(f.params);
    if (op.operation !== 'W') continue;
    if ((op.bank === 'E' && (op.block ?? 0) === 0) || (op.bank === '1' && op.block === 2))
      return (f.data ?? '').toUpperCase();
  }
  return null;
}

function toBytes(data: string, format: string, count: number | undefined): Uint8Array {
  if (format === 'H' && !/^[0-9A-Fa-f]*$/.test(data)) throw new Error('field data is not hex');
  let bytes =
    format === 'A' ? Buffer.from(data, 'latin1') : Buffer.from(data.length % 2 ? `${data}0` : data, 'hex');
  if (count !== undefined && count < bytes.length) bytes = bytes.subarray(0, count);
  if (bytes.length % 2) bytes = Buffer.concat([bytes, Buffer.alloc(1)]);
  return new Uint8Array(bytes);
}
