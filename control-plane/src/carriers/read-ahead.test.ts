import { describe, expect, it } from 'vitest';
import { readAhead } from './export.js';

/** A source of pages 1..n that records how far it was asked, and fails at `failAt` if given. */
function source(n: number, failAt?: number) {
  const asked: number[] = [];
  let finished = false;
  async function* pages(): AsyncGenerator<number> {
    try {
      for (let i = 1; i <= n; i++) {
        asked.push(i);
        await new Promise((r) => setTimeout(r, 1));
        if (i === failAt) throw new Error(`page ${i} failed`);
        yield i;
      }
    } finally {
      finished = true;
    }
  }
  return { pages: pages(), asked, finished: () => finished };
}

describe('readAhead', () => {
  it('gives every page in order, having asked for one page more than was taken, never two', async () => {
    const s = source(5);
    const seen: number[] = [];
    for await (const page of readAhead(s.pages)) {
      seen.push(page);
      await new Promise((r) => setTimeout(r, 5)); // the next page's read has time to start
      expect(s.asked.length).toBe(Math.min(page + 1, 5));
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(s.finished()).toBe(true);
  });

  it("fails at the failing page's turn, after the pages before it", async () => {
    const s = source(5, 3);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of readAhead(s.pages)) seen.push(page);
      })(),
    ).rejects.toThrow('page 3 failed');
    expect(seen).toEqual([1, 2]);
  });

  it('ends the source when the reader stops early, and a page read ahead that fails is never unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const s = source(5, 2);
      for await (const page of readAhead(s.pages)) {
        expect(page).toBe(1);
        await new Promise((r) => setTimeout(r, 10)); // page 2 fails meanwhile
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
      expect(s.finished()).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
