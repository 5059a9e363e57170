import { describe, expect, it } from 'vitest';
import { noticePayload, parseNotice } from './invalidation.js';

describe('the notices replicas send each other', () => {
  it('names the labels a write sealed, or everything', () => {
    const labels = ['09506000134352 A1', '09506000134352 B/2'];
    expect(parseNotice(noticePayload('public', 'r1', labels))).toEqual({
      schema: 'public',
      from: 'r1',
      labels,
    });
    expect(parseNotice(noticePayload('public', 'r1', 'any'))).toEqual({ schema: 'public', from: 'r1' });
  });

  it('says everything when the labels do not fit in a NOTIFY payload (under 8,000 bytes)', () => {
    const labels = Array.from({ length: 400 }, (_, i) => `09506000134352 SERIAL-${i}`);
    const payload = noticePayload('public', 'r1', labels);
    expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    expect(parseNotice(payload)).toEqual({ schema: 'public', from: 'r1' });
  });

  it('ignores what is not a notice', () => {
    for (const payload of [
      undefined,
      '',
      'public r1',
      'null',
      '{"schema":"public"}',
      '{"schema":"public","from":"r1","labels":[1]}',
    ])
      expect(parseNotice(payload), String(payload)).toBeUndefined();
  });
});
