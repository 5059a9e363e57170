import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logging/logger.js';
import { type PassResult, PollingLoop } from './polling-loop.js';

const log = { error: () => undefined } as unknown as Logger;

describe('a polling loop', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A loop whose passes are recorded by the (fake) time they started, answering `results` in turn, then idle. */
  function loopOf(opts: { wakeGapMs?: number; results?: PassResult[] }) {
    const starts: number[] = [];
    const results = [...(opts.results ?? [])];
    const loop = new PollingLoop({
      name: 'test',
      pollMs: 10_000,
      log,
      pass: () => {
        starts.push(Date.now());
        return Promise.resolve(results.shift() ?? 'idle');
      },
      ...(opts.wakeGapMs !== undefined ? { wakeGapMs: opts.wakeGapMs } : {}),
      now: () => Date.now(),
    });
    return { loop, starts };
  }

  it('without a gap, starts a pass at every wake-up', async () => {
    const { loop, starts } = loopOf({});
    const t0 = Date.now();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 3; i++) {
      loop.wake();
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(starts.map((s) => s - t0)).toEqual([0, 0, 1, 2]);
    await loop.stop();
  });

  it('with a gap, makes a burst of wake-ups one pass, started when the gap since the last one is over', async () => {
    const { loop, starts } = loopOf({ wakeGapMs: 100 });
    const t0 = Date.now();
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    for (let i = 0; i < 5; i++) {
      loop.wake();
      await vi.advanceTimersByTimeAsync(10);
    }
    await vi.advanceTimersByTimeAsync(200);
    // The first pass at start; the burst at 10-50 ms is one pass, 100 ms after the first began.
    expect(starts.map((s) => s - t0)).toEqual([0, 100]);
    // A wake-up long after the last pass starts one at once.
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(starts.map((s) => s - t0)).toEqual([0, 100, 260]);
    await loop.stop();
  });

  it('goes again at once after a pass that worked, gap or not, and polls when idle', async () => {
    const { loop, starts } = loopOf({ wakeGapMs: 100, results: ['worked', 'worked'] });
    const t0 = Date.now();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(starts.map((s) => s - t0)).toEqual([0, 0, 0]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(starts.map((s) => s - t0)).toEqual([0, 0, 0, 10_000]);
    await loop.stop();
  });

  it('stops while it waits out a gap', async () => {
    const { loop, starts } = loopOf({ wakeGapMs: 1_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    loop.wake();
    const stopped = loop.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopped;
    expect(starts).toHaveLength(1);
  });
});
