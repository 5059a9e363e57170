/**
 * Memory of one NFC Forum Type 2 tag (the HF inlay under one label), modelled on an NTAG215: 135 pages
 * (blocks) of 4 bytes. Pages 0 to 2 hold the UID and the static lock bytes and cannot be written; page 3 is
 * the capability container (`E1 10 3E 00`: NDEF, version 1.0, 496 bytes of data, read/write); the data area
 * runs from page 4 to page 127; the pages after it (dynamic lock, configuration) are not simulated and refuse
 * writes. A fresh tag's data area holds an empty NDEF message, `03 00 FE`, as tags leave the factory
 * (NFC Forum Type 2 Tag Operation Specification §2.1-§2.3).
 */
import { SimError } from '../errors.js';

export const TYPE2_PAGE_BYTES = 4;
export const TYPE2_FIRST_DATA_PAGE = 4;
/** One past the last data page (NTAG215: 124 data pages, 496 bytes). */
export const TYPE2_END_DATA_PAGE = 128;

export class Type2Tag {
  private readonly memory = new Uint8Array(TYPE2_END_DATA_PAGE * TYPE2_PAGE_BYTES);

  constructor(readonly serial: number) {
    // A 7-byte UID: NXP's manufacturer code 04, then the serial.
    this.memory.set([0x04, 0x00, 0x00, 0x00]);
    new DataView(this.memory.buffer).setUint32(4, serial);
    this.memory.set([0xe1, 0x10, 0x3e, 0x00], 3 * TYPE2_PAGE_BYTES);
    this.memory.set([0x03, 0x00, 0xfe], TYPE2_FIRST_DATA_PAGE * TYPE2_PAGE_BYTES);
  }

  /** Writes whole pages from `page`; the UID/lock pages and anything past the data area are refused. */
  write(page: number, data: Uint8Array): void {
    if (page < 3) throw new SimError('NFC_WRITE_REFUSED', `page ${page} (UID and lock bytes) is read-only`);
    if (data.length === 0 || data.length % TYPE2_PAGE_BYTES !== 0) {
      throw new SimError('NFC_WRITE_REFUSED', 'a Type 2 tag is written in whole 4-byte pages', {
        details: { bytes: data.length },
      });
    }
    const end = page * TYPE2_PAGE_BYTES + data.length;
    if (end > this.memory.length) {
      throw new SimError('NFC_WRITE_REFUSED', `write past the data area (page ${end / TYPE2_PAGE_BYTES})`, {
        details: { page, bytes: data.length },
      });
    }
    this.memory.set(data, page * TYPE2_PAGE_BYTES);
  }

  /** Reads `pages` pages from `page`. */
  read(page: number, pages: number): Uint8Array {
    const at = page * TYPE2_PAGE_BYTES;
    const end = at + pages * TYPE2_PAGE_BYTES;
    if (page < 0 || pages < 1 || end > this.memory.length) {
      throw new SimError('NFC_WRITE_REFUSED', 'read outside the tag', { details: { page, pages } });
    }
    return this.memory.slice(at, end);
  }

  /** The data area, from page 4 (where the NDEF TLV is). */
  get dataArea(): Uint8Array {
    return this.memory.slice(TYPE2_FIRST_DATA_PAGE * TYPE2_PAGE_BYTES);
  }
}
