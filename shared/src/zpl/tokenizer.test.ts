import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenizeZpl, ZplTokenizer, splitZplParams, type ZplToken } from './tokenizer.js';
import { ZplLabelBuilder } from './writer.js';

const LABEL = new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
  .rfidSetup({ tries: 3, onError: 'E' })
  .qr(20, 20, 'https://id.example.com/01/09506000134352/21/2', { magnification: 5 })
  .text(20, 320, 'Lot 7, shift B', { height: 30 })
  .writeEpc('30764433400D1EC000000002')
  .readBackEpc()
  .toString();

/** Feeds `input` split at the given cut points and returns every token. */
function feed(input: string, cuts: number[]): ZplToken[] {
  const tokenizer = new ZplTokenizer();
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const out: ZplToken[] = [];
  let from = 0;
  for (const p of [...points, input.length]) {
    out.push(...tokenizer.push(input.slice(from, p)));
    from = p;
  }
  return [...out, ...tokenizer.flush()];
}

const names = (tokens: ZplToken[]): string[] =>
  tokens.flatMap((t) => (t.kind === 'command' ? [t.command.prefix + t.command.name] : []));

describe('ZplTokenizer', () => {
  it('tokenizes a label, keeping commas in field data and the QR switches', () => {
    const cmds = tokenizeZpl(LABEL);
    expect(cmds.map((c) => c.name)).toEqual([
      'XA',
      'PW',
      'LL',
      'RS',
      'FO',
      'BQ',
      'FD',
      'FS',
      'FO',
      'A',
      'FD',
      'FS',
      'RF',
      'FD',
      'FS',
      'RF',
      'FN',
      'FS',
      'FH',
      'HV',
      'FS',
      'XZ',
    ]);
    const fds = cmds.filter((c) => c.name === 'FD').map((c) => c.params);
    expect(fds).toEqual([
      'MA,https://id.example.com/01/09506000134352/21/2',
      'Lot 7, shift B',
      '30764433400D1EC000000002',
    ]);
    expect(cmds.find((c) => c.name === 'A')?.params).toBe('0N,30,30');
    expect(splitZplParams(cmds.find((c) => c.name === 'RS')?.params ?? '')).toEqual(['8', '', '', '3', 'E']);
  });

  it('emits ~HS and ~HQES at once, without waiting for a following prefix', () => {
    const t = new ZplTokenizer();
    expect(names(t.push('~HS'))).toEqual(['~HS']);
    expect(names(t.push('~HQE'))).toEqual([]);
    const [hq] = t.push('S');
    expect(hq?.kind === 'command' && hq.command.params).toBe('ES');
    expect(t.pending).toBe(false);
  });

  it('holds a delimited command until the next prefix arrives', () => {
    const t = new ZplTokenizer();
    expect(names(t.push('^XA^FO10,1'))).toEqual(['^XA']);
    expect(t.pending).toBe(true);
    expect(names(t.push('0^FS'))).toEqual(['^FO', '^FS']);
  });

  it('reads ^A with its font letter and ^A@ as separate commands, case-insensitively', () => {
    const cmds = tokenizeZpl('^xa^a0n,30,20^FDx^fs^A@N,20,20,E:ARIAL.TTF^XZ');
    expect(cmds.map((c) => [c.name, c.params])).toEqual([
      ['XA', ''],
      ['A', '0n,30,20'],
      ['FD', 'x'],
      ['FS', ''],
      ['A@', 'N,20,20,E:ARIAL.TTF'],
      ['XZ', ''],
    ]);
  });

  it('drops CR and LF and reports garbage between commands, then resyncs', () => {
    const tokens = feed('\x00\xffjunk^XA\r\n^FO1,2^FDok^FS\n^XZtrailing~HS', []);
    expect(names(tokens)).toEqual(['^XA', '^FO', '^FD', '^FS', '^XZ', '~HS']);
    expect(
      tokens.filter((t) => t.kind === 'garbage').map((t) => (t.kind === 'garbage' ? t.text : '')),
    ).toEqual(['\x00\xffjunk', 'trailing']);
  });

  it('treats a prefix followed by a non-name character as garbage', () => {
    const tokens = feed('^\x01^XA^ ^XZ', []);
    expect(names(tokens)).toEqual(['^XA', '^XZ']);
    expect(tokens.filter((t) => t.kind === 'garbage')).toHaveLength(2);
  });

  it('gives the same tokens however the input is split (property)', () => {
    const whole = feed(LABEL + '~HS~HQES', []);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        expect(feed(LABEL + '~HS~HQES', cuts)).toEqual(whole);
      }),
    );
  });

  it('recovers every command of a label after noise that contains no prefix (property)', () => {
    const noise = fc.string({
      unit: fc.constantFrom('a', 'Z', '9', ' ', '\x00', '\xff', ',', '\r', '\n'),
      maxLength: 12,
    });
    fc.assert(
      fc.property(noise, noise, fc.array(fc.nat(), { maxLength: 20 }), (before, after, cuts) => {
        const tokens = feed(`${before}${LABEL}\n${after}~HS`, cuts);
        const expected = [...tokenizeZpl(LABEL).map((c) => c.prefix + c.name), '~HS'];
        expect(names(tokens)).toEqual(expected);
      }),
    );
  });
});
