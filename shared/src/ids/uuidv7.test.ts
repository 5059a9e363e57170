import { describe, expect, it } from 'vitest';
import { uuidv7 } from './uuidv7.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID whose first 48 bits are the Unix time in milliseconds', () => {
    const ms = Date.parse('2026-11-22T17:00:00.123Z');
    const id = uuidv7(ms);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(ms);
  });

  it('increases within one millisecond and across many, also past 4,096 in one millisecond', () => {
    const ms = Date.parse('2027-01-01T00:00:00Z');
    const ids = Array.from({ length: 10_000 }, (_, i) => uuidv7(ms + Math.floor(i / 5000)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });

  it('gives every id random bits of its own, across many draws of random bytes', () => {
    // 62 random bits an id: among 5,000 ids a repeat would mean bytes drawn twice.
    const tails = Array.from({ length: 5_000 }, (_, i) =>
      uuidv7(Date.parse('2027-02-01T00:00:00Z') + i).slice(19),
    );
    expect(new Set(tails).size).toBe(tails.length);
  });

  it('keeps increasing when the clock goes back', () => {
    const later = uuidv7(Date.parse('2027-06-01T00:00:00Z'));
    const earlier = uuidv7(Date.parse('2027-05-01T00:00:00Z'));
    expect(earlier > later).toBe(true);
  });
});
