import { describe, expect, it } from 'vitest';
import { PublicAnswerCache, answerKey, cachedAnswer, labelKey } from './cache.js';

const answer = (status: number, body?: unknown) =>
  cachedAnswer({ status, body, headers: { 'Cache-Control': 'public, max-age=60' } }, '/r');

describe('PublicAnswerCache', () => {
  it('keeps an answer until max age after its computation started, then computes again', async () => {
    let now = 1_000;
    const cache = new PublicAnswerCache({ maxAgeMs: 500, now: () => now });
    let computed = 0;
    const compute = async () => {
      computed += 1;
      now += 100; // the lookup took 100 ms: the entry's age counts from its start
      return { value: computed, answer: answer(200, { computed }) };
    };
    const fromCache = (a: { bytes?: Buffer }) =>
      (JSON.parse(String(a.bytes)) as { computed: number }).computed;
    expect(await cache.through('k', compute, fromCache)).toBe(1);
    now = 1_499;
    expect(await cache.through('k', compute, fromCache)).toBe(1);
    now = 1_500;
    expect(cache.get('k')).toBeUndefined();
    expect(await cache.through('k', compute, fromCache)).toBe(2);
  });

  it('shares one computation between concurrent misses of a key', async () => {
    const cache = new PublicAnswerCache({ maxAgeMs: 500 });
    let computed = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const compute = async () => {
      computed += 1;
      await gate;
      return { value: 'v', answer: answer(302) };
    };
    const all = Promise.all([1, 2, 3].map(() => cache.through('k', compute, () => 'hit')));
    release();
    expect(await all).toEqual(['v', 'v', 'v']);
    expect(computed).toBe(1);
  });

  it('does not store what was computed while it was invalidated, and tells its listeners', async () => {
    const cache = new PublicAnswerCache({ maxAgeMs: 500 });
    let told = 0;
    cache.onInvalidate(() => (told += 1));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const racing = cache.through(
      'k',
      async () => {
        await gate;
        return { value: 'old', answer: answer(200, { state: 'old' }) };
      },
      () => 'hit',
    );
    cache.invalidate();
    release();
    expect(await racing).toBe('old');
    expect(cache.get('k')).toBeUndefined();
    expect(told).toBe(1);
    cache.dropAll();
    expect(told).toBe(1);
  });

  describe('what a write says it changed', () => {
    const label = { gtin: '9506000134352', serial: 'A1' };
    const other = { gtin: '09506000134352', serial: 'B2' };
    const store = (cache: PublicAnswerCache, key: string, of?: { gtin: string; serial: string }) =>
      cache.through(
        key,
        async () => ({ value: key, answer: answer(302) }),
        () => key,
        of && (() => labelKey(of)),
      );

    it('throws away only the answers of the labels sealed, and tells its listeners which', async () => {
      const cache = new PublicAnswerCache({ maxAgeMs: 500 });
      const told: unknown[] = [];
      cache.onInvalidate((what) => told.push(what));
      await store(cache, 'scan', label);
      await store(cache, 'scan as linkset', label);
      await store(cache, 'other scan', other);
      await store(cache, 'passport read');
      cache.invalidate([]);
      expect(cache.size).toBe(4);
      // A GTIN-13 and its GTIN-14 are one label.
      cache.invalidate([{ gtin: '09506000134352', serial: 'A1' }]);
      expect(cache.get('scan')).toBeUndefined();
      expect(cache.get('scan as linkset')).toBeUndefined();
      expect(cache.get('other scan')?.status).toBe(302);
      expect(cache.get('passport read')?.status).toBe(302);
      expect(told).toEqual([['09506000134352 A1']]);
      cache.invalidate('any');
      expect(cache.size).toBe(0);
      expect(told).toEqual([['09506000134352 A1'], 'any']);
    });

    it("does not store a label's answer computed while that label was sealed, nor join it afterwards", async () => {
      const cache = new PublicAnswerCache({ maxAgeMs: 500 });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let computed = 0;
      const slow = (key: string, of: { gtin: string; serial: string }) =>
        cache.through(
          key,
          async () => {
            computed += 1;
            await gate;
            return { value: 'before the seal', answer: answer(302) };
          },
          () => 'hit',
          () => labelKey(of),
        );
      const racing = slow('scan', label);
      const unrelated = slow('other scan', other);
      cache.dropLabels([labelKey(label)]);
      // A scan after the seal does not share the lookup begun before it.
      const after = cache.through(
        'scan',
        async () => ({ value: 'after the seal', answer: answer(302, { proof: true }) }),
        () => 'hit',
        () => labelKey(label),
      );
      release();
      expect(await Promise.all([racing, unrelated, after])).toEqual([
        'before the seal',
        'before the seal',
        'after the seal',
      ]);
      expect(computed).toBe(2);
      expect(cache.get('scan')?.bytes?.toString()).toBe('{"proof":true}');
      expect(cache.get('other scan')?.status).toBe(302);
    });

    it('forgets a seal once no answer computed before it could still be stored', async () => {
      let now = 1_000;
      const cache = new PublicAnswerCache({ maxAgeMs: 500, now: () => now });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const racing = cache.through(
        'scan',
        async () => {
          await gate;
          return { value: 'v', answer: answer(302) };
        },
        () => 'hit',
        () => labelKey(label),
      );
      cache.dropLabels([labelKey(label)]);
      now = 1_600;
      // Another seal later prunes the first from memory; the racing lookup's answer is too old to keep anyway.
      cache.dropLabels([labelKey(other)]);
      release();
      await racing;
      expect(cache.size).toBe(0);
      await store(cache, 'scan', label);
      expect(cache.get('scan')?.status).toBe(302);
    });
  });

  it('stores nothing an answer marks as not storable, and nothing when off', async () => {
    const cache = new PublicAnswerCache({ maxAgeMs: 500 });
    await cache.through(
      'k',
      async () => ({ value: 1, answer: undefined }),
      () => 0,
    );
    expect(cache.size).toBe(0);
    const off = new PublicAnswerCache({ maxAgeMs: 0 });
    expect(off.enabled).toBe(false);
    await off.through(
      'k',
      async () => ({ value: 1, answer: answer(200, {}) }),
      () => 0,
    );
    expect(off.size).toBe(0);
  });

  it('forgets the oldest entries beyond its size', async () => {
    const cache = new PublicAnswerCache({ maxAgeMs: 500, maxEntries: 2 });
    for (const k of ['a', 'b', 'c'])
      await cache.through(
        k,
        async () => ({ value: k, answer: answer(200, k) }),
        () => '',
      );
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')?.status).toBe(200);
  });

  it('serialises a JSON answer with the content type res.json gives', () => {
    const a = answer(200, { x: 1 });
    expect(a.bytes?.toString()).toBe('{"x":1}');
    expect(a.headers['Content-Type']).toBe('application/json; charset=utf-8');
    const linkset = cachedAnswer(
      { status: 200, body: {}, headers: { 'Content-Type': 'application/linkset+json' } },
      '/r',
    );
    expect(linkset.headers['Content-Type']).toBe('application/linkset+json; charset=utf-8');
    expect(answer(302).bytes).toBeUndefined();
  });

  it('keys on origin, URL and whether Accept asks for a linkset', () => {
    expect(answerKey('http://a', '/01/x', undefined)).toBe(answerKey('http://a', '/01/x', 'text/html'));
    expect(answerKey('http://a', '/01/x', 'application/linkset+json')).not.toBe(
      answerKey('http://a', '/01/x', undefined),
    );
    expect(answerKey('https://a', '/01/x', undefined)).not.toBe(answerKey('http://a', '/01/x', undefined));
  });
});
