import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WakeableSleep } from './time.js';

/** Whether `p` has settled, after the microtasks queued so far ran (the fake clock does not move). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('WakeableSleep', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ends a sleep when woken', async () => {
    const s = new WakeableSleep();
    const slept = s.sleep(10_000);
    expect(await settled(slept)).toBe(false);
    s.wake();
    expect(await settled(slept)).toBe(true); // without the clock moving
  });

  it('keeps a wake-up that came while nobody slept, for the next sleep only', async () => {
    const s = new WakeableSleep();
    s.wake();
    expect(await settled(s.sleep(10_000))).toBe(true);
    const second = s.sleep(30);
    await vi.advanceTimersByTimeAsync(29);
    expect(await settled(second)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(second)).toBe(true);
  });
});
