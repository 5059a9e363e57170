/**
 * Memory of one EPC Gen2 tag (the inlay under one label). Four banks, word (16-bit) addressed:
 * reserved (passwords), EPC (word 0 StoredCRC, word 1 StoredPC, words 2.. the EPC), TID, user.
 * A fresh inlay holds an all-zero 96-bit EPC. How many EPC bits the chip holds is the inlay's own: 496
 * (the Gen2 maximum, chips such as Alien Higgs-9) unless told otherwise; a 128-bit chip (Impinj M730, NXP
 * UCODE 8) refuses a PC announcing more, and a write past its memory, as the real one answers a memory
 * overrun.
 */
import { SimError } from '../errors.js';
import { crc16Gen2 } from './crc16.js';

export type MemoryBank = 'reserved' | 'epc' | 'tid' | 'user';

/** Words of EPC memory after CRC and PC: the Gen2 maximum of 496 bits (PC length bits 15..11). */
export const EPC_WORDS_MAX = 31;

export class Gen2Tag {
  private readonly banks: Record<MemoryBank, Uint8Array>;

  /** `epcBits`: the EPC memory of the chip after CRC and PC, whole words, 16 to 496 bits; default 496. */
  constructor(
    readonly serial: number,
    readonly epcBits = EPC_WORDS_MAX * 16,
  ) {
    if (!Number.isInteger(epcBits) || epcBits % 16 !== 0 || epcBits < 96 || epcBits > EPC_WORDS_MAX * 16) {
      throw new SimError('INVALID_OPTION', 'a tag holds whole words of EPC, 96 to 496 bits', {
        details: { epcBits },
      });
    }
    const tid = new Uint8Array(12);
    // E2 = Gen2 allocation class; 801170 a made-up mask designer/model; then a 48-bit serial.
    tid.set([0xe2, 0x80, 0x11, 0x70, 0x20, 0x00]);
    new DataView(tid.buffer).setUint32(8, serial);
    this.banks = {
      reserved: new Uint8Array(8),
      epc: new Uint8Array(4 + epcBits / 8),
      tid,
      user: new Uint8Array(64),
    };
    this.setEpcLengthWords(6);
  }

  /** EPC words announced by the PC length bits (PC bits 15..11). */
  get epcLengthWords(): number {
    return (this.banks.epc[2] ?? 0) >> 3;
  }

  /** The EPC as a reader inventories it: as many words as the PC says, upper-case hex. */
  get epcHex(): string {
    return hex(this.banks.epc.subarray(4, 4 + this.epcLengthWords * 2));
  }

  get tidHex(): string {
    return hex(this.banks.tid);
  }

  /** Writes whole words at `wordOffset`. TID is locked, as on real tags. */
  write(bank: MemoryBank, wordOffset: number, data: Uint8Array): void {
    if (bank === 'tid') throw new SimError('RFID_MEMORY_OVERRUN', 'TID memory is locked');
    const mem = this.banks[bank];
    const at = wordOffset * 2;
    if (data.length % 2 !== 0 || at < 0 || at + data.length > mem.length) {
      throw new SimError('RFID_MEMORY_OVERRUN', `write outside ${bank} memory`, {
        details: { wordOffset, bytes: data.length },
      });
    }
    if (bank === 'epc' && at <= 2 && at + data.length >= 4) {
      const words = (data[2 - at]! >> 3) & 0x1f;
      if (words * 16 > this.epcBits) {
        throw new SimError(
          'RFID_MEMORY_OVERRUN',
          `the PC announces ${words * 16} EPC bits, the tag holds ${this.epcBits}`,
          {
            details: { words },
          },
        );
      }
    }
    mem.set(data, at);
    if (bank === 'epc') this.updateCrc();
  }

  /** Reads `byteCount` bytes from `wordOffset`. */
  read(bank: MemoryBank, wordOffset: number, byteCount: number): Uint8Array {
    const mem = this.banks[bank];
    const at = wordOffset * 2;
    if (at < 0 || byteCount < 0 || at + byteCount > mem.length) {
      throw new SimError('RFID_MEMORY_OVERRUN', `read outside ${bank} memory`, {
        details: { wordOffset, byteCount },
      });
    }
    return mem.slice(at, at + byteCount);
  }

  bankSize(bank: MemoryBank): number {
    return this.banks[bank].length;
  }

  /**
   * Writes a whole EPC from word 2 and sets the PC length bits to match, so an inventory returns
   * exactly what was written.
   */
  writeEpc(data: Uint8Array): void {
    this.write('epc', 2, data);
    this.setEpcLengthWords(data.length / 2);
  }

  private setEpcLengthWords(words: number): void {
    const pc = this.banks.epc;
    pc[2] = ((pc[2] ?? 0) & 0x07) | (words << 3);
    this.updateCrc();
  }

  private updateCrc(): void {
    const mem = this.banks.epc;
    const crc = crc16Gen2(mem.subarray(2, 4 + this.epcLengthWords * 2));
    mem[0] = crc >> 8;
    mem[1] = crc & 0xff;
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase();
}
