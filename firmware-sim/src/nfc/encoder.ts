/**
 * The NFC (HF, 13.56 MHz) encoder of the printer: runs the `^WT` and `^RT` fields of a label format against
 * the Type 2 tag under the label. `^WTb,r,m,w,f,v` writes the field data from block `b` (format `f`: 0
 * ASCII, 1 hex); `^RT#,b,n,f,r,m,s` reads `n` blocks from `b` into field `#` (ZPL II Programming Guide, ^WT
 * and ^RT, the commands of Zebra's HF printers). Retries, motion and write protect are not simulated: the
 * `^RS` tries apply, one label each, as for the UHF encoder. That these commands reach an NFC encoder beside
 * the UHF one is this floor's convention (docs/device-protocol.md), not Zebra's.
 */
import { splitZplParams, uriOfTagData } from '@dpp/shared';
import type { SimLogger } from '../log.js';
import { Type2Tag } from './type2-tag.js';

/** A `^WT` or `^RT` field of a format. */
export interface NfcField {
  command: 'WT' | 'RT';
  /** The command's parameters, e.g. `4,0,1,0,1,N` or `2,4,8,1,0,1`. */
  params: string;
  /** Field data (`^FD`) of a write. */
  data?: string | undefined;
}

export interface NfcEncodeResult {
  /** Every write succeeded. */
  ok: boolean;
  /** Read results by field number. */
  reads: Map<number, string>;
}

const num = (s: string | undefined, fallback: number): number =>
  s !== undefined && /^\d+$/.test(s.trim()) ? Number(s) : fallback;

export class NfcEncoder {
  private tags = 0;

  constructor(private readonly log: SimLogger) {}

  /** The HF inlay of the next label on the roll. */
  nextTag(): Type2Tag {
    return new Type2Tag(++this.tags);
  }

  /**
   * Runs the fields in order. With `failWrites` (the void NFC tag fault) every write fails and leaves the
   * tag as it was; reads still answer with what the tag holds.
   */
  encode(tag: Type2Tag, fields: readonly NfcField[], failWrites: boolean): NfcEncodeResult {
    const reads = new Map<number, string>();
    let ok = true;
    for (const field of fields) {
      const p = splitZplParams(field.params);
      try {
        if (field.command === 'WT') {
          if (failWrites) throw new Error('tag did not answer the write');
          const hexFormat = num(p[4], 0) === 1;
          const data = field.data ?? '';
          if (hexFormat && !/^(?:[0-9A-Fa-f]{2})+$/.test(data))
            throw new Error('field data is not hex bytes');
          tag.write(num(p[0], 0), new Uint8Array(Buffer.from(data, hexFormat ? 'hex' : 'latin1')));
        } else {
          const bytes = tag.read(num(p[1], 0), num(p[2], 1));
          reads.set(
            num(p[0], 0),
            num(p[3], 0) === 1
              ? Buffer.from(bytes).toString('hex').toUpperCase()
              : Buffer.from(bytes).toString('latin1'),
          );
        }
      } catch (err) {
        if (field.command === 'WT') ok = false;
        this.log.info('NFC operation failed', {
          command: field.command,
          params: field.params,
          err: (err as Error).message,
          tag: tag.serial,
        });
      }
    }
    return { ok, reads };
  }
}

/** The URI of the NDEF URI record a tag holds, or null when it holds none (a blank or foreign tag). */
export function nfcUriOf(tag: Type2Tag): string | null {
  try {
    return uriOfTagData(tag.dataArea);
  } catch {
    return null;
  }
}
