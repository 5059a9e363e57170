import { describe, expect, it } from 'vitest';
import { TRAY_COLORS, trayIconBitmap, trayView, type TrayPrinter } from './tray.js';

const p = (name: string, state: TrayPrinter['state']): TrayPrinter => ({ name, state });

describe('the tray', () => {
  it('shows the worst printer state, and what a person must do first', () => {
    expect(trayView([p('a', 'ready'), p('b', 'ready')])).toEqual({
      level: 'ok',
      worst: 'ready',
      tooltip: 'DPP print floor - a: ready, b: ready',
    });
    expect(trayView([p('a', 'ready'), p('b', 'printing')])).toMatchObject({
      level: 'busy',
      worst: 'printing',
    });
    expect(trayView([p('a', 'printing'), p('b', 'paused')])).toMatchObject({
      level: 'attention',
      worst: 'paused',
    });
    const out = trayView([p('a', 'printing'), p('b', 'paper_out'), p('c', 'paused')]);
    expect(out).toMatchObject({ level: 'fault', worst: 'paper_out' });
    expect(out.tooltip).toBe('DPP print floor - b: paper out, c: paused, a: printing');
    expect(trayView([p('a', 'head_open'), p('b', 'offline')]).worst).toBe('offline');
    expect(trayView([p('a', 'offline'), p('b', 'error')]).worst).toBe('error');
    expect(trayView([p('a', 'ribbon_out')]).level).toBe('fault');
  });

  it('asks for attention when prints wait for a supervisor, without hiding a fault', () => {
    expect(trayView([p('a', 'printing')], 1)).toMatchObject({
      level: 'attention',
      tooltip: 'DPP print floor - 1 print to attest, a: printing',
    });
    expect(trayView([p('a', 'ready')], 2).tooltip).toBe('DPP print floor - 2 prints to attest, a: ready');
    expect(trayView([p('a', 'paper_out')], 2).level).toBe('fault');
  });

  it('says so when there are no printers, and keeps the tooltip within 127 characters', () => {
    expect(trayView([])).toEqual({
      level: 'ok',
      worst: null,
      tooltip: 'DPP print floor - no printers configured',
    });
    const many = Array.from({ length: 20 }, (_, i) => p(`printer-${i}`, 'ready'));
    const t = trayView(many).tooltip;
    expect(t).toHaveLength(127);
    expect(t.endsWith('…')).toBe(true);
  });

  it('draws a dot of the level colour on a transparent square (BGRA)', () => {
    const size = 32;
    for (const level of ['ok', 'busy', 'attention', 'fault'] as const) {
      const bmp = trayIconBitmap(level, size);
      expect(bmp).toHaveLength(size * size * 4);
      const at = (x: number, y: number) => [...bmp.subarray((y * size + x) * 4, (y * size + x) * 4 + 4)];
      const [r, g, b] = TRAY_COLORS[level];
      expect(at(16, 16)).toEqual([b, g, r, 255]);
      expect(at(0, 0)).toEqual([0, 0, 0, 0]);
      expect(at(31, 31)).toEqual([0, 0, 0, 0]);
      expect(at(16, 0)[3]).toBe(0); // a one-pixel margin
      const edge = at(16, 1)[3]!; // the rim is anti-aliased
      expect(edge).toBeGreaterThan(0);
      expect(edge).toBeLessThan(255);
    }
    expect(new Set(Object.values(TRAY_COLORS).map((c) => c.join())).size).toBe(4);
    expect(() => trayIconBitmap('ok', 4)).toThrow(RangeError);
  });
});
