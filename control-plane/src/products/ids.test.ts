import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { timeOrderedUuid } from './ids.js';

describe('timeOrderedUuid (UUIDv7)', () => {
  it('is a version 7, variant 10 UUID carrying the millisecond time', () => {
    const id = timeOrderedUuid(Date.parse('2026-01-02T03:04:05.678Z'));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(z.uuid().safeParse(id).success).toBe(true);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(
      Date.parse('2026-01-02T03:04:05.678Z'),
    );
  });

  it('sorts in creation order, also within one millisecond and past the 12-bit counter', () => {
    const ids = Array.from({ length: 10_000 }, () => timeOrderedUuid(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const later = timeOrderedUuid(1_800_000_000_001);
    expect(later > ids.at(-1)!).toBe(true);
  });
});
