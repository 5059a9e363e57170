import { describe, expect, it } from 'vitest';
import { formatHqesStatus, hqesStatusOf, HQES_ERRORS, parseHqesStatus } from './error-status.js';
import { printerStatusFromHqes } from './printer-status.js';

describe('~HQES', () => {
  it('uses the guide bit values for media out, ribbon out and head open', () => {
    expect(HQES_ERRORS.mediaOut).toBe(0x1);
    expect(HQES_ERRORS.ribbonOut).toBe(0x2);
    expect(HQES_ERRORS.headOpen).toBe(0x4);
  });

  it('formats the PRINTER STATUS block with ERRORS and WARNINGS lines', () => {
    const text = formatHqesStatus(hqesStatusOf(['mediaOut', 'headOpen'], ['cleanPrinthead']));
    expect(text).toBe(
      '\x02\r\n  PRINTER STATUS\r\n   ERRORS:         1 00000000 00000005\r\n   WARNINGS:       1 00000000 00000002\r\n\x03\r\n',
    );
  });

  it('parses a block with any spacing and names the bits', () => {
    const s = parseHqesStatus(
      '\x02\r\nPRINTER STATUS\r\n ERRORS: 1 00000000 00000005\r\n WARNINGS:  0 00000000 00000000\r\n\x03',
    );
    expect(s.errorNames).toEqual(['mediaOut', 'headOpen']);
    expect(s.warningNames).toEqual([]);
    expect(printerStatusFromHqes(s)).toMatchObject({
      ready: false,
      paperOut: true,
      headOpen: true,
      ribbonOut: false,
    });
  });

  it('reads an all-clear block as ready', () => {
    const s = parseHqesStatus(formatHqesStatus(hqesStatusOf([])));
    expect(printerStatusFromHqes(s)).toMatchObject({ ready: true, errors: [] });
  });

  it('refuses a block without the heading or a line', () => {
    expect(() => parseHqesStatus('ERRORS: 0 00000000 00000000\r\nWARNINGS: 0 00000000 00000000')).toThrow(
      /PRINTER STATUS/,
    );
    expect(() => parseHqesStatus('PRINTER STATUS\r\nERRORS: 0 00000000 00000000')).toThrow(/WARNINGS/);
  });
});
