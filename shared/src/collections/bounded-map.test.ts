import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('keeps at most max entries, forgetting the one set longest ago', () => {
    const m = new BoundedMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c', 'd', 'e'].entries()) m.set(k, i);
    expect([...m.entries()]).toEqual([
      ['c', 2],
      ['d', 3],
      ['e', 4],
    ]);
  });

  it('makes an entry set again the newest, so the one in use stays', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1).set('b', 2).set('a', 3).set('c', 4);
    expect([...m.entries()]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
    expect(m.size).toBe(2);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
