import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { crc16Gen2 } from './crc16.js';
import { epcWriteOf, RfidEncoder } from './encoder.js';
import { Gen2Tag } from './tag.js';

describe('Gen2 tag memory', () => {
  it('computes the Gen2 CRC-16 (check value of "123456789" is 0xD64E)', () => {
    expect(crc16Gen2(new TextEncoder().encode('123456789'))).toBe(0xd64e);
  });

  it('starts blank: a 96-bit all-zero EPC with PC 0x3000', () => {
    const tag = new Gen2Tag(1);
    expect(tag.epcHex).toBe('0'.repeat(24));
    expect(Buffer.from(tag.read('epc', 1, 2)).toString('hex')).toBe('3000');
  });

  it('writes an EPC after CRC and PC, sets the PC length and keeps the CRC right', () => {
    const tag = new Gen2Tag(1);
    tag.writeEpc(Buffer.from('30764433400D1EC000000002', 'hex'));
    expect(tag.epcHex).toBe('30764433400D1EC000000002');
    const bank = tag.read('epc', 0, 16);
    expect((bank[0]! << 8) | bank[1]!).toBe(crc16Gen2(bank.subarray(2)));
    tag.writeEpc(Buffer.from('ABCD1234', 'hex'));
    expect(tag.epcHex).toBe('ABCD1234');
    expect(tag.epcLengthWords).toBe(2);
  });

  it('refuses writes to the locked TID and outside a bank', () => {
    const tag = new Gen2Tag(7);
    expect(tag.tidHex).toMatch(/^E28011702000/);
    expect(() => tag.write('tid', 0, new Uint8Array(2))).toThrow(/locked/);
    expect(() => tag.write('user', 32, new Uint8Array(2))).toThrow(/outside/);
  });
});

describe('RfidEncoder', () => {
  const encoder = new RfidEncoder(silentLogger);

  it('runs ^RFW,H then ^RFR,H into field numbers, in hex and ASCII', () => {
    const tag = encoder.nextTag();
    const result = encoder.encode(
      tag,
      [
        { params: 'W,H', data: '30764433400D1EC000000002' },
        { params: 'R,H,0,12,E', fieldNumber: 1 },
        { params: 'W,A,0,4,3', data: 'LOT7' },
        { params: 'R,A,0,4,3', fieldNumber: 2 },
        { params: 'R,H,0,16,1', fieldNumber: 3 },
      ],
      false,
    );
    expect(result.ok).toBe(true);
    expect(result.reads.get(1)).toBe('30764433400D1EC000000002');
    expect(result.reads.get(2)).toBe('LOT7');
    expect(result.reads.get(3)).toMatch(/^[0-9A-F]{4}300030764433400D1EC000000002$/);
  });

  it('fails every write of a void tag, which then reads back blank', () => {
    const tag = encoder.nextTag();
    const result = encoder.encode(
      tag,
      [
        { params: 'W,H', data: '30764433400D1EC000000002' },
        { params: 'R,H', fieldNumber: 1 },
      ],
      true,
    );
    expect(result.ok).toBe(false);
    expect(result.reads.get(1)).toBe('0'.repeat(24));
  });

  it('fails a write whose data is not hex, and ignores operations it does not simulate', () => {
    const tag = encoder.nextTag();
    expect(encoder.encode(tag, [{ params: 'W,H', data: 'XYZ1' }], false).ok).toBe(false);
    expect(encoder.encode(tag, [{ params: 'L,H', data: '0000' }], false).ok).toBe(true);
  });

  /** urn:epc:tag:sgtin-198:3.0614141.012345.32a/b, zero-padded to 13 words. */
  const SGTIN198 = '3674257BF40C0E59B2C2BF100000000000000000000000000000';

  it('writes a 208-bit EPC the Zebra way (PC word, then bank 1 from word 2) and reads all of it back', () => {
    const tag = encoder.nextTag();
    const fields = [
      { params: 'W,H,1,2,1', data: '6800' },
      { params: 'W,H,2,26,1', data: SGTIN198 },
      { params: 'R,H,2,26,1', fieldNumber: 1 },
    ];
    const result = encoder.encode(tag, fields, false);
    expect(result.ok).toBe(true);
    expect(result.reads.get(1)).toBe(SGTIN198);
    expect(tag.epcHex).toBe(SGTIN198); // what an inventory (and the scanner's EPC: line) returns
    expect(tag.epcLengthWords).toBe(13);
    const bank = tag.read('epc', 0, 30);
    expect((bank[0]! << 8) | bank[1]!).toBe(crc16Gen2(bank.subarray(2)));
    expect(epcWriteOf(fields)).toBe(SGTIN198);
    expect(epcWriteOf([{ params: 'W,H', data: '30764433400d1ec000000002' }])).toBe(
      '30764433400D1EC000000002',
    );
  });

  it('refuses more than 96 bits through bank E, and pads less with zeros', () => {
    const tag = encoder.nextTag();
    expect(encoder.encode(tag, [{ params: 'W,H', data: SGTIN198 }], false).ok).toBe(false);
    expect(tag.epcHex).toBe('0'.repeat(24));
    expect(encoder.encode(tag, [{ params: 'W,H', data: 'ABCD' }], false).ok).toBe(true);
    expect(tag.epcHex).toBe(`ABCD${'0'.repeat(20)}`);
  });

  it('on a 128-bit inlay, refuses the PC of an SGTIN-198 and its EPC, which then reads back short', () => {
    const small = new RfidEncoder(silentLogger, 128);
    const tag = small.nextTag();
    const result = small.encode(
      tag,
      [
        { params: 'W,H,1,2,1', data: '6800' },
        { params: 'W,H,2,26,1', data: SGTIN198 },
        { params: 'R,H,2,26,1', fieldNumber: 1 },
      ],
      false,
    );
    expect(result.ok).toBe(false);
    expect(result.reads.has(1)).toBe(false); // 26 bytes are not there to read
    expect(tag.epcHex).toBe('0'.repeat(24));
    expect(() => new RfidEncoder(silentLogger, 100)).toThrow(/whole words/);
  });
});
