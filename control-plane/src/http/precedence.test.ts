import { AsyncLocalStorage } from 'node:async_hooks';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Precedence } from './precedence.js';

/** Starts a deferrable operation; `started` turns true when it may begin, `end()` ends it. */
function deferrable(p: Precedence) {
  const op = { started: false, end: () => {} };
  p.deferrable((end) => {
    op.started = true;
    op.end = end;
  });
  return op;
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await nextTurn();
};

describe('Precedence', () => {
  it('starts a deferrable operation at once when nothing stands in its way', () => {
    const p = new Precedence();
    expect(deferrable(p).started).toBe(true);
    expect(p.deferred).toBe(0);
  });

  it('starts only the first of the deferrable operations a turn reads, the others one per later turn', async () => {
    const p = new Precedence();
    const ops = [deferrable(p), deferrable(p), deferrable(p)];
    expect(ops.map((o) => o.started)).toEqual([true, false, false]);
    await nextTurn();
    expect(ops.map((o) => o.started)).toEqual([true, true, false]);
    await nextTurn();
    expect(ops.map((o) => o.started)).toEqual([true, true, true]);
    // A later turn may again start one at once.
    await nextTurn();
    expect(deferrable(p).started).toBe(true);
  });

  it('holds deferrable operations while a first-in-line one is in progress, and starts them after it', async () => {
    const p = new Precedence({ maxWaitMs: 60_000 });
    const endClaim = p.first();
    const a = deferrable(p);
    const b = deferrable(p);
    await turns(3);
    expect([a.started, b.started]).toEqual([false, false]);
    endClaim();
    endClaim(); // ending twice (finish, then close) counts once
    expect(a.started).toBe(false); // in a later turn, not inside the claim's end
    await turns(3);
    expect([a.started, b.started]).toEqual([true, true]);
  });

  it('lets a claim that arrives while results wait go before the next one', async () => {
    const p = new Precedence({ maxWaitMs: 60_000 });
    const endFirst = p.first();
    const a = deferrable(p);
    const b = deferrable(p);
    endFirst();
    await nextTurn();
    expect([a.started, b.started]).toEqual([true, false]);
    const endSecond = p.first(); // arrives between the two
    await turns(3);
    expect(b.started).toBe(false);
    endSecond();
    await turns(2);
    expect(b.started).toBe(true);
  });

  it('keeps at most `concurrency` deferrable operations in progress, the rest in arrival order', async () => {
    const p = new Precedence({ concurrency: 2 });
    const ops = [deferrable(p), deferrable(p), deferrable(p), deferrable(p)];
    await turns(3);
    expect(ops.map((o) => o.started)).toEqual([true, true, false, false]);
    expect(p.deferred).toBe(2);
    ops[1]!.end();
    await turns(2);
    expect(ops.map((o) => o.started)).toEqual([true, true, true, false]);
    ops[0]!.end();
    await turns(2);
    expect(ops[3]!.started).toBe(true);
    expect(p.deferred).toBe(0);
  });

  it('starts a deferrable operation that waited maxWaitMs even while a claim is still in progress', async () => {
    const p = new Precedence({ maxWaitMs: 20 });
    p.first(); // never ends (a claim stuck on a slow database)
    const a = deferrable(p);
    await nextTurn();
    expect(a.started).toBe(false);
    await sleep(60);
    expect(a.started).toBe(true);
  });

  it('starts a waiting operation in its own async context', async () => {
    const p = new Precedence();
    const als = new AsyncLocalStorage<string>();
    const endClaim = als.run('claim', () => p.first());
    const seen = new Promise<string | undefined>((resolve) =>
      als.run('result', () => p.deferrable(() => resolve(als.getStore()))),
    );
    als.run('claim', endClaim);
    expect(await seen).toBe('result');
  });
});
