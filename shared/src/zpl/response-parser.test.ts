import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatHqesStatus, hqesStatusOf } from './error-status.js';
import { formatHostStatus, parseHostStatus } from './host-status.js';
import {
  NFC_HOST_VERIFICATION_FRAMING,
  formatHostVerification,
  parseHostVerification,
} from './host-verification.js';
import { ZplResponseParser, type ZplResponse } from './response-parser.js';

const HS = formatHostStatus({
  ...parseHostStatus(
    '\x02030,0,0,0400,000,0,0,0,000,0,0,0\x03\x02001,0,0,0,1,2,4,0,00000000,1,000\x03\x021234,0\x03',
  ),
  paperOut: true,
  formatsInBuffer: 1,
});
const HQES = formatHqesStatus(hqesStatusOf(['ribbonOut']));
const HV = formatHostVerification('30764433400D1EC000000002', undefined, 24);
const STREAM = HS + HV + HQES + HV;

function feed(input: string, cuts: number[], parser = new ZplResponseParser()): ZplResponse[] {
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const out: ZplResponse[] = [];
  let from = 0;
  for (const p of [...points, input.length]) {
    out.push(...parser.push(input.slice(from, p)));
    from = p;
  }
  return out;
}

const summary = (rs: ZplResponse[]): string[] =>
  rs.map((r) => {
    switch (r.kind) {
      case 'hostStatus':
        return `HS paperOut=${r.status.paperOut} buffer=${r.status.formatsInBuffer}`;
      case 'errorStatus':
        return `HQES ${r.status.errors.join('+')}`;
      case 'hostVerification':
        return `HV ${r.data}`;
      case 'garbage':
        return 'garbage';
    }
  });

describe('ZplResponseParser', () => {
  const expected = [
    'HS paperOut=true buffer=1',
    'HV 30764433400D1EC000000002',
    'HQES ribbonOut',
    'HV 30764433400D1EC000000002',
  ];

  it('splits ~HS, ~HQES and ^HV answers from one stream', () => {
    expect(summary(feed(STREAM, []))).toEqual(expected);
  });

  it('gives the same answers however the stream is chunked (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 60 }), (cuts) => {
        expect(summary(feed(STREAM, cuts))).toEqual(expected);
      }),
    );
  });

  it('resyncs after noise and a frame that lost its ETX (property)', () => {
    const noise = fc.string({
      unit: fc.constantFrom('x', '7', ',', ' ', '\r\n'),
      minLength: 1,
      maxLength: 10,
    });
    fc.assert(
      fc.property(noise, fc.array(fc.nat(), { maxLength: 30 }), (junk, cuts) => {
        const broken = '\x02030,0,0'; // a frame cut off by a line drop
        const rs = feed(`${junk}\r\n${broken}${STREAM}`, cuts);
        expect(summary(rs.filter((r) => r.kind !== 'garbage'))).toEqual(expected);
        expect(rs.some((r) => r.kind === 'garbage')).toBe(true);
      }),
    );
  });

  it('honours a custom ^HV framing', () => {
    const framing = { header: 'TID:[', terminator: ']' };
    const rs = feed(`${HS}TID:[E2801170]`, [3, 50], new ZplResponseParser({ hostVerification: framing }));
    expect(summary(rs)).toEqual(['HS paperOut=true buffer=1', 'HV E2801170']);
    expect(parseHostVerification('\r\nTID:[E2801170]', framing)).toBe('E2801170');
  });

  it('tells the EPC and NFC read-backs of one label apart by their headers, however chunked', () => {
    const nfc = formatHostVerification('0312D1010E5504', NFC_HOST_VERIFICATION_FRAMING, 256);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        const rs = feed(HV + nfc + HS, cuts);
        expect(rs.map((r) => (r.kind === 'hostVerification' ? `${r.header}${r.data}` : r.kind))).toEqual([
          'EPC:30764433400D1EC000000002',
          'NFC:0312D1010E5504',
          'hostStatus',
        ]);
      }),
    );
    expect(
      () =>
        new ZplResponseParser({
          hostVerification: [
            { header: 'A:', terminator: '\r\n' },
            { header: 'B:', terminator: ']' },
          ],
        }),
    ).toThrow(/same terminator/);
    expect(() => new ZplResponseParser({ hostVerification: [] })).toThrow(/at least one/);
  });

  it('reports a stray string that is not one of the three ~HS strings as garbage', () => {
    const rs = feed('\x02hello\x03\r\n' + HS, []);
    expect(summary(rs)).toEqual(['garbage', 'HS paperOut=true buffer=1']);
  });
});
