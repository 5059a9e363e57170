import { describe, expect, it } from 'vitest';
import { PIN_HASH_PATTERN, hashPin, verifyPin } from './pin.js';
import { SupervisorSessions, type SupervisorAccount } from './sessions.js';

/** A cheap cost keeps the tests fast; the format and the checks are the same. */
const CHEAP = { N: 1024, r: 8, p: 1 };

async function account(id: string, name: string, pin: string): Promise<SupervisorAccount> {
  return { id, name, pinHash: await hashPin(pin, CHEAP) };
}

describe('supervisor PIN hashes', () => {
  it('verifies the PIN a hash was made from, and nothing else', async () => {
    const hash = await hashPin('2468', CHEAP);
    expect(hash).toMatch(PIN_HASH_PATTERN);
    expect(hash.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPin('2468', hash)).toBe(true);
    expect(await verifyPin('2469', hash)).toBe(false);
    expect(await verifyPin('24680', hash)).toBe(false);
    expect(await hashPin('2468', CHEAP)).not.toBe(hash); // a fresh salt each time
  });

  it('uses the default cost (N = 16384) when none is given', async () => {
    const hash = await hashPin('badge-0042');
    expect(hash.startsWith('scrypt$16384$8$1$')).toBe(true);
    expect(await verifyPin('badge-0042', hash)).toBe(true);
  });

  it('refuses malformed PINs and hashes, and costs it will not spend time on', async () => {
    await expect(hashPin('12')).rejects.toThrow(/4 to 64/);
    await expect(hashPin('12 34')).rejects.toThrow(/4 to 64/);
    await expect(hashPin('1234', { N: 1000, r: 8, p: 1 })).rejects.toThrow(/cost/);
    const hash = await hashPin('2468', CHEAP);
    expect(await verifyPin('2468', 'plain-2468')).toBe(false);
    expect(await verifyPin('2468', hash.replace('$1024$', '$4194304$'))).toBe(false); // 4 GiB of memory
    expect(await verifyPin('2468', hash.slice(0, -4))).toBe(false);
    expect(await verifyPin('', hash)).toBe(false);
  });
});

describe('supervisor sessions', () => {
  it('signs a supervisor in by PIN alone, or by id and PIN, and names them in the session', async () => {
    const sessions = new SupervisorSessions({
      supervisors: [await account('s1', 'Ana Lima', '2468'), await account('s2', 'Bo Chen', '1357')],
    });
    expect(sessions.required).toBe(true);
    const r = await sessions.signIn('1357');
    expect(r).toMatchObject({ ok: true, session: { supervisor: { id: 's2', name: 'Bo Chen' } } });
    if (!r.ok) throw new Error('unreachable');
    expect(r.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sessions.get(r.token)?.supervisor).toEqual({ id: 's2', name: 'Bo Chen' });
    expect(await sessions.signIn('1357', 's1')).toEqual({ ok: false, code: 'WRONG_PIN' });
    expect(await sessions.signIn('2468', 's1')).toMatchObject({
      ok: true,
      session: { supervisor: { id: 's1' } },
    });
    expect(sessions.get('not-a-token')).toBeNull();
    expect(sessions.signOut(r.token)).toBe(true);
    expect(sessions.get(r.token)).toBeNull();
    expect(sessions.signOut(r.token)).toBe(false);
  });

  it('signs nobody in with a PIN two supervisors share', async () => {
    const sessions = new SupervisorSessions({
      supervisors: [await account('s1', 'Ana', '2468'), await account('s2', 'Bo', '2468')],
    });
    expect(await sessions.signIn('2468')).toEqual({ ok: false, code: 'PIN_NOT_UNIQUE' });
    expect(await sessions.signIn('2468', 's2')).toMatchObject({
      ok: true,
      session: { supervisor: { id: 's2' } },
    });
  });

  it('needs no session when no supervisor is configured', () => {
    expect(new SupervisorSessions({ supervisors: [] }).required).toBe(false);
  });

  it('ends a session after the idle time, restarted by use (not by looking), and after the longest life', async () => {
    let now = 1_000_000;
    const sessions = new SupervisorSessions({
      supervisors: [await account('s1', 'Ana', '2468')],
      now: () => now,
      idleMs: 60_000,
      maxMs: 150_000,
    });
    const r = await sessions.signIn('2468');
    if (!r.ok) throw new Error('sign-in failed');
    expect(r.session.expiresAt).toBe(new Date(now + 60_000).toISOString());
    now += 50_000;
    expect(sessions.get(r.token)).not.toBeNull(); // looking does not extend it
    now += 9_000;
    expect(sessions.get(r.token, true)?.expiresAt).toBe(new Date(now + 60_000).toISOString()); // an action does
    now += 59_000;
    expect(sessions.get(r.token, true)).not.toBeNull();
    now += 30_000; // 148 s after sign-in: the longest life caps the expiry
    expect(sessions.get(r.token, true)?.expiresAt).toBe(new Date(1_000_000 + 150_000).toISOString());
    now += 2_000;
    expect(sessions.get(r.token)).toBeNull();

    const again = await sessions.signIn('2468');
    if (!again.ok) throw new Error('sign-in failed');
    now += 60_000;
    expect(sessions.get(again.token)).toBeNull(); // idle for the whole idle time
  });

  it('refuses every attempt after five wrong PINs in a minute, until the oldest leaves the window', async () => {
    let now = 5_000_000;
    const sessions = new SupervisorSessions({
      supervisors: [await account('s1', 'Ana', '2468')],
      now: () => now,
    });
    for (let i = 0; i < 5; i++) {
      expect(await sessions.signIn(`000${i}`)).toEqual({ ok: false, code: 'WRONG_PIN' });
      now += 1_000;
    }
    // The right PIN too: the limit is on the console, not on a guess.
    expect(await sessions.signIn('2468')).toEqual({
      ok: false,
      code: 'TOO_MANY_ATTEMPTS',
      retryAfterMs: 55_000,
    });
    now += 55_000;
    expect(await sessions.signIn('2468')).toMatchObject({ ok: true });
    expect(await sessions.signIn('9999')).toEqual({ ok: false, code: 'WRONG_PIN' });
    expect(await sessions.signIn('9999')).toMatchObject({ ok: false, code: 'TOO_MANY_ATTEMPTS' });
  });

  it('counts checks in flight, so parallel guesses cannot slip past the limit', async () => {
    const sessions = new SupervisorSessions({ supervisors: [await account('s1', 'Ana', '2468')] });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => sessions.signIn(`10${String(i).padStart(2, '0')}`)),
    );
    const codes = results.map((r) => (r.ok ? 'ok' : r.code));
    expect(codes.filter((c) => c === 'WRONG_PIN')).toHaveLength(5);
    expect(codes.filter((c) => c === 'TOO_MANY_ATTEMPTS')).toHaveLength(7);
  });
});
