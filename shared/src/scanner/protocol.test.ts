import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScannerCommandParser, ScannerLineParser, type ScannerLineEvent } from './line-parser.js';
import { formatScannerRead, parseScannerLine, SCANNER_TRIGGER, type ScannerRead } from './protocol.js';

const URL = 'https://id.example.com/01/09506000134352/21/2';
const READS: ScannerRead[] = [
  { kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: URL },
  { kind: 'epc', epc: '30764433400D1EC000000002' },
  { kind: 'noRead' },
  { kind: 'noTag' },
];

function chunks(input: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of [...points, input.length]) {
    out.push(input.slice(from, p));
    from = p;
  }
  return out;
}

describe('scanner lines', () => {
  it('formats each read as one CR LF line and parses it back', () => {
    expect(READS.map(formatScannerRead)).toEqual([
      `]Q1${URL}\r\n`,
      'EPC:30764433400D1EC000000002\r\n',
      'NOREAD\r\n',
      'NOTAG\r\n',
    ]);
    for (const r of READS) expect(parseScannerLine(formatScannerRead(r))).toEqual(r);
  });

  it('keeps the AIM identifier of other symbologies and refuses unknown lines', () => {
    expect(parseScannerLine(']C1ABC')).toEqual({
      kind: 'symbol',
      aimId: ']C1',
      symbology: 'other',
      data: 'ABC',
    });
    expect(() => parseScannerLine('hello')).toThrow(/scanner read/);
    expect(() => parseScannerLine('EPC:123')).toThrow();
    expect(() => formatScannerRead({ kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: 'a\nb' })).toThrow(
      /CR or LF/,
    );
  });

  it('parses the same reads however the stream is chunked, skipping noise lines (property)', () => {
    const stream = READS.map(formatScannerRead).join('');
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.constantFrom('', 'garbage\r\n', '\r\n\r\n'),
        (cuts, noise) => {
          const parser = new ScannerLineParser();
          const events: ScannerLineEvent[] = chunks(noise + stream, cuts).flatMap((c) => parser.push(c));
          expect(events.filter((e) => e.kind !== 'garbage')).toEqual(READS);
        },
      ),
    );
  });

  it('finds trigger commands in noise across chunks (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (cuts) => {
        const parser = new ScannerCommandParser();
        const input = `zz\x16X\r${SCANNER_TRIGGER}\x16\x16U\rab${SCANNER_TRIGGER}`;
        expect(chunks(input, cuts).flatMap((c) => parser.push(c))).toEqual([
          'trigger',
          'untrigger',
          'trigger',
        ]);
      }),
    );
  });
});
