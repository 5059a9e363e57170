import { describe, expect, it } from 'vitest';
import { isDeviceProtocolError } from './errors.js';
import {
  decodeHostStatusSerial,
  encodeHostStatusSerial,
  formatHostStatus,
  parseHostStatus,
  type HostStatus,
} from './host-status.js';
import { printerStatusFromHostStatus } from './printer-status.js';

/** A ~HS answer in the shape the ZPL II Programming Guide documents (9600 8N1, tear-off, idle). */
const SAMPLE =
  '\x02030,0,0,1245,000,0,0,0,000,0,0,0\x03\r\n' +
  '\x02001,0,0,0,1,2,4,0,00000000,1,000\x03\r\n' +
  '\x021234,0\x03\r\n';

describe('~HS', () => {
  it('parses every field of the three strings', () => {
    const hs = parseHostStatus(SAMPLE);
    expect(hs.serial).toEqual({
      baudRate: 9600,
      dataBits: 8,
      stopBits: 1,
      parity: 'none',
      handshake: 'xon/xoff',
    });
    expect(hs).toMatchObject({
      paperOut: false,
      paused: false,
      labelLengthDots: 1245,
      formatsInBuffer: 0,
      headUp: false,
      ribbonOut: false,
      thermalTransferMode: true,
      printMode: '2',
      printWidthMode: '4',
      labelsRemaining: 0,
      password: '1234',
      staticRam: false,
    });
    expect(hs.functionSettings.thermalTransfer).toBe(true);
    expect(printerStatusFromHostStatus(hs).ready).toBe(true);
  });

  it('formats exactly the bytes it parses', () => {
    expect(formatHostStatus(parseHostStatus(SAMPLE))).toBe(SAMPLE);
  });

  it('reports paper out, pause, head up, ribbon out and the buffer in their own fields', () => {
    const base = parseHostStatus(SAMPLE);
    const faulted: HostStatus = {
      ...base,
      paperOut: true,
      paused: true,
      headUp: true,
      ribbonOut: true,
      formatsInBuffer: 2,
    };
    const text = formatHostStatus(faulted);
    const [one, two] = text.split('\r\n');
    expect(one).toBe('\x02030,1,1,1245,002,0,0,0,000,0,0,0\x03');
    expect(two).toBe('\x02001,0,1,1,1,2,4,0,00000000,1,000\x03');
    const status = printerStatusFromHostStatus(parseHostStatus(text));
    expect(status).toMatchObject({
      ready: false,
      paperOut: true,
      paused: true,
      headOpen: true,
      ribbonOut: true,
      formatsInBuffer: 2,
    });
    expect(status.errors).toEqual(['paperOut', 'ribbonOut', 'headOpen', 'paused']);
  });

  it('packs the serial settings as the guide table says (a8 a2 a1 a0 baud, a3 data, a4 stop, a5/a6 parity, a7 DTR)', () => {
    expect(
      encodeHostStatusSerial({
        baudRate: 9600,
        dataBits: 8,
        stopBits: 1,
        parity: 'none',
        handshake: 'xon/xoff',
      }),
    ).toBe(30);
    expect(
      encodeHostStatusSerial({ baudRate: 38400, dataBits: 7, stopBits: 2, parity: 'even', handshake: 'dtr' }),
    ).toBe(256 + 1 + 32 + 64 + 128);
    for (const baudRate of [110, 1200, 9600, 14400, 19200, 28800, 57600, 115200]) {
      const s = { baudRate, dataBits: 8, stopBits: 1, parity: 'odd', handshake: 'xon/xoff' } as const;
      expect(decodeHostStatusSerial(encodeHostStatusSerial(s))).toEqual(s);
    }
  });

  it('refuses answers that are not three strings of 12, 11 and 2 fields', () => {
    const bad = [
      SAMPLE.slice(0, SAMPLE.lastIndexOf('\x02')),
      SAMPLE.replace('1245,', ''),
      SAMPLE.replace('0,0,0\x03', '0,0,2\x03'),
    ];
    for (const reply of bad) {
      expect(() => parseHostStatus(reply)).toThrow();
      try {
        parseHostStatus(reply);
      } catch (err) {
        expect(isDeviceProtocolError(err, 'MALFORMED_HOST_STATUS')).toBe(true);
      }
    }
  });
});
