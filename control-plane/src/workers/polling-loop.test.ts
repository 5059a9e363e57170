import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { PollingLoop, type PassResult } from './polling-loop.js';

/** A loop whose passes are counted, each answering what `results` says next (idle when it runs out). */
function countingLoop(opts: { pollMs: number; wakeGapMs?: number }, results: PassResult[] = []) {
  const passes: number[] = [];
  const loop = new PollingLoop({
    name: 'test loop',
    log: pino({ level: 'silent' }),
    ...opts,
    pass: () => {
      passes.push(Date.now());
      return Promise.resolve(results.shift() ?? 'idle');
    },
  });
  return { loop, passes };
}

describe('PollingLoop', () => {
  beforeEach(() => void vi.useFakeTimers({ now: 0 }));
  afterEach(() => void vi.useRealTimers());

  it('polls every pollMs while idle and goes again at once after a pass that worked', async () => {
    const { loop, passes } = countingLoop({ pollMs: 1_000 }, ['worked', 'worked']);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toEqual([0, 0, 0]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(passes).toEqual([0, 0, 0, 1_000, 2_000]);
    await loop.stop();
  });

  it('looks at once when woken, with no gap', async () => {
    const { loop, passes } = countingLoop({ pollMs: 1_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toEqual([0, 10]);
    await loop.stop();
  });

  it('gathers the wake-ups that come within wakeGapMs of the last pass into one pass at its end', async () => {
    const { loop, passes } = countingLoop({ pollMs: 1_000, wakeGapMs: 250 });
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    for (let i = 0; i < 5; i++) {
      loop.wake();
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(passes).toEqual([0]);
    await vi.advanceTimersByTimeAsync(150);
    expect(passes).toEqual([0, 250]);
    // Long after the last pass, a wake-up is looked at at once.
    await vi.advanceTimersByTimeAsync(400);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toEqual([0, 250, 660]);
    await loop.stop();
  });

  it('never waits past the next poll for a wake-up, and goes again at once after a pass that worked', async () => {
    const { loop, passes } = countingLoop({ pollMs: 100, wakeGapMs: 500 }, ['idle', 'worked']);
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    loop.wake();
    await vi.advanceTimersByTimeAsync(200);
    expect(passes).toEqual([0, 100, 100, 200]);
    await loop.stop();
  });

  it('stops at once while it waits out a gap', async () => {
    const { loop, passes } = countingLoop({ pollMs: 10_000, wakeGapMs: 5_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    loop.wake();
    const stopped = loop.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopped;
    expect(passes).toEqual([0]);
    expect(loop.stopping).toBe(true);
  });
});
