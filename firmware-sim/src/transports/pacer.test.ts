import { describe, expect, it } from 'vitest';
import type { Clock } from './clock.js';
import { Pacer } from './pacer.js';

/** A clock that only moves when the pacer sleeps. */
function fakeClock(): Clock & { t: number } {
  const c = {
    t: 0,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += Math.max(0, ms);
    },
  };
  return c;
}

describe('Pacer', () => {
  it('passes bytes at baud/10 per second, whatever the chunking', async () => {
    for (const baud of [9600, 19200, 115200]) {
      const clock = fakeClock();
      const got: Buffer[] = [];
      const pacer = new Pacer(
        () => baud,
        (b) => void got.push(b),
        clock,
      );
      await Promise.all([pacer.push(Buffer.alloc(500, 1)), pacer.push(Buffer.alloc(460, 2))]);
      expect(Buffer.concat(got)).toEqual(Buffer.concat([Buffer.alloc(500, 1), Buffer.alloc(460, 2)]));
      expect(clock.t).toBeCloseTo((960 * 10 * 1000) / baud, 5);
    }
  });

  it('follows a baud change mid-transfer and passes everything at once when unpaced', async () => {
    const clock = fakeClock();
    let baud: number | null = 9600;
    const got: Buffer[] = [];
    const pacer = new Pacer(
      () => baud,
      (b) => {
        got.push(b);
        if (Buffer.concat(got).length >= 99) baud = null;
      },
      clock,
    );
    await pacer.push(Buffer.alloc(1000));
    expect(Buffer.concat(got).length).toBe(1000);
    expect(clock.t).toBeCloseTo((99 * 10 * 1000) / 9600, 5); // 11 slices of 9 bytes at 9600 baud, then unpaced
  });

  it('drops what is queued once stopped', async () => {
    const clock = fakeClock();
    const got: Buffer[] = [];
    const pacer = new Pacer(
      () => 9600,
      (b) => {
        got.push(b);
        pacer.stop();
      },
      clock,
    );
    await pacer.push(Buffer.alloc(100));
    expect(Buffer.concat(got).length).toBe(9);
  });
});
