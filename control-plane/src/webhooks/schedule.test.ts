import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  MAX_RETRY_AFTER_MS,
  nextRetryDelay,
  parseRetryAfter,
  verdictOf,
} from './schedule.js';

const fixed = (random: number) => ({
  delaysMs: DEFAULT_RETRY_SCHEDULE_MS,
  jitterRatio: 0.2,
  random: () => random,
});

describe('retry schedule', () => {
  it('retries first within about ten seconds and spans about three days over 12 attempts', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toHaveLength(11);
    const first = DEFAULT_RETRY_SCHEDULE_MS[0]!;
    expect(first * 1.2).toBeLessThanOrEqual(10_000);
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total / 86_400_000).toBeGreaterThan(2.8);
    expect(total / 86_400_000).toBeLessThan(3.2);
    for (let i = 1; i < DEFAULT_RETRY_SCHEDULE_MS.length; i++) {
      expect(DEFAULT_RETRY_SCHEDULE_MS[i]!).toBeGreaterThanOrEqual(DEFAULT_RETRY_SCHEDULE_MS[i - 1]!);
    }
  });

  it('moves each delay by at most ±20% and is spent after the last entry', () => {
    expect(nextRetryDelay(fixed(0), 1)).toBe(4_000);
    expect(nextRetryDelay(fixed(0.5), 1)).toBe(5_000);
    expect(nextRetryDelay(fixed(0.999999), 1)).toBe(6_000);
    expect(nextRetryDelay(fixed(0.5), 11)).toBe(86_400_000);
    expect(nextRetryDelay(fixed(0.5), 12)).toBeUndefined();
  });

  it('waits longer when the receiver asks for it with Retry-After, up to a day', () => {
    expect(nextRetryDelay(fixed(0.5), 1, 60_000)).toBe(60_000);
    expect(nextRetryDelay(fixed(0.5), 1, 1_000)).toBe(5_000);
    expect(nextRetryDelay(fixed(0.5), 1, 10 * MAX_RETRY_AFTER_MS)).toBe(MAX_RETRY_AFTER_MS);
    expect(nextRetryDelay(fixed(0.5), 12, 1_000)).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('verdictOf (api-v2.md, Events, receiver rule 4)', () => {
  it.each([
    [200, 'delivered'],
    [201, 'delivered'],
    [204, 'delivered'],
    [400, 'give_up'],
    [401, 'give_up'],
    [404, 'give_up'],
    [410, 'give_up'],
    [422, 'give_up'],
    [408, 'retry'],
    [429, 'retry'],
    [301, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [null, 'retry'],
  ] as const)('%s -> %s', (status, verdict) => {
    expect(verdictOf(status)).toBe(verdict);
  });
});
