import { describe, expect, it } from 'vitest';
import { WakeableSleep } from './time.js';

describe('WakeableSleep', () => {
  it('ends a sleep when woken', async () => {
    const s = new WakeableSleep();
    const t = Date.now();
    const slept = s.sleep(10_000);
    s.wake();
    await slept;
    expect(Date.now() - t).toBeLessThan(1_000);
  });

  it('keeps a wake-up that came while nobody slept, for the next sleep only', async () => {
    const s = new WakeableSleep();
    s.wake();
    const t = Date.now();
    await s.sleep(10_000);
    expect(Date.now() - t).toBeLessThan(1_000);
    const second = Date.now();
    await s.sleep(30);
    expect(Date.now() - second).toBeGreaterThanOrEqual(25);
  });
});
