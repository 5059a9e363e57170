import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../cli-args.js';
import { checkMechanics, labelMs, mechanicalLimit, RFID_PRINTER_MECHANICS } from './mechanics.js';

describe('the mechanical model', () => {
  it('takes encode, read-back and the media travel for one RFID label, one label at a time', () => {
    const m = { printSpeedIps: 6, labelLengthIn: 2, rfidEncodeMs: 100, rfidReadBackMs: 40 };
    expect(labelMs(m)).toBeCloseTo(2000 / 6 + 140, 6);
    expect(labelMs(m, false)).toBeCloseTo(2000 / 6, 6);
    expect(mechanicalLimit(m)).toBeCloseTo(1000 / (2000 / 6 + 140), 6);
    expect(RFID_PRINTER_MECHANICS).toEqual(m);
  });

  it('refuses a speed or length of zero and negative times', () => {
    expect(() => checkMechanics({ ...RFID_PRINTER_MECHANICS, printSpeedIps: 0 })).toThrow(/printSpeedIps/);
    expect(() => checkMechanics({ ...RFID_PRINTER_MECHANICS, rfidEncodeMs: -1 })).toThrow(/rfidEncodeMs/);
  });

  it('is the CLI default, set by its flags, and off with --instant', () => {
    expect(parseCliArgs([]).mechanics).toEqual(RFID_PRINTER_MECHANICS);
    expect(
      parseCliArgs(['--speed', '4', '--label-length', '1.5', '--encode-ms', '80', '--readback-ms', '0'])
        .mechanics,
    ).toEqual({ printSpeedIps: 4, labelLengthIn: 1.5, rfidEncodeMs: 80, rfidReadBackMs: 0 });
    expect(parseCliArgs(['--instant']).mechanics).toBeNull();
    expect(() => parseCliArgs(['--speed', '0'])).toThrow(/--speed/);
  });
});
