import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox, type Store, openStore } from '../store/index.js';
import { Keyring } from './keyring.js';

describe('Keyring', () => {
  let dir: string;
  let store: Store;
  let keyring: Keyring;
  let clock: number;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-keyring-'));
    store = await openStore({ sqliteFile: path.join(dir, 'dpp.sqlite') });
    clock = Date.parse('2026-11-27T10:00:00Z');
    keyring = new Keyring({
      db: store.db,
      secrets: SecretBox.of(Buffer.alloc(32, 7)),
      now: () => clock,
      retiredGraceMs: 60_000,
    });
    await keyring.init();
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a compact EdDSA JWS that verifies against the published JWKS, with kid and typ', async () => {
    const payload = new TextEncoder().encode('{"a":1}');
    const jws = await keyring.signCompact(payload, 'dpp-test+jws');
    const header = decodeProtectedHeader(jws);
    expect(header).toEqual({ alg: 'EdDSA', kid: keyring.jwks().keys[0]!.kid, typ: 'dpp-test+jws' });
    const verified = await compactVerify(jws, createLocalJWKSet(keyring.jwks()), { algorithms: ['EdDSA'] });
    expect(new TextDecoder().decode(verified.payload)).toBe('{"a":1}');
    // One changed byte of the payload and it no longer verifies.
    const [h, p, s] = jws.split('.');
    const tampered = `${h}.${Buffer.from('{"a":2}').toString('base64url')}.${s}`;
    expect(p).not.toBe(tampered.split('.')[1]);
    await expect(compactVerify(tampered, createLocalJWKSet(keyring.jwks()))).rejects.toThrow();
  });

  it('signs with the new key after a rotation, and what the old key signed still verifies', async () => {
    const before = await keyring.signCompact(new Uint8Array([1]), 't');
    const kid = await keyring.rotate();
    const after = await keyring.signCompact(new Uint8Array([2]), 't');
    expect(decodeProtectedHeader(after).kid).toBe(kid);
    // Both verify against the published keys (the JWKS keeps a retired key through its grace).
    for (const jws of [before, after])
      await expect(compactVerify(jws, createLocalJWKSet(keyring.jwks()))).resolves.toBeTruthy();
  });

  it('signs without yielding to the event loop (a unit of work that signs holds the connection no longer)', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const signed: Promise<string>[] = [];
    for (let i = 0; i < 20; i++) signed.push(keyring.signCompact(new Uint8Array([i]), 't'));
    await Promise.all(signed);
    expect(turned).toBe(false);
  });

  describe('verifyJwt', () => {
    const checks = { issuer: 'https://cp.example', audience: 'dpp-api', typ: 'at+jwt' };
    const token = (expiresInSeconds = 900) =>
      keyring.signJwt(
        { iss: checks.issuer, aud: checks.audience, sub: 'd-1' },
        { typ: 'at+jwt', expiresInSeconds },
      );

    it('answers a token it verified before without going through the event loop again', async () => {
      const jwt = await token();
      const first = await keyring.verifyJwt(jwt, checks);
      let turned = false;
      setImmediate(() => (turned = true));
      expect(await keyring.verifyJwt(jwt, checks)).toEqual(first);
      expect(turned).toBe(false);
    });

    it('still refuses a remembered token once it has expired, or under other checks', async () => {
      const jwt = await token(60);
      await keyring.verifyJwt(jwt, checks);
      await expect(keyring.verifyJwt(jwt, { ...checks, audience: 'other' })).rejects.toThrow();
      clock += 61_000;
      await expect(keyring.verifyJwt(jwt, checks)).rejects.toThrow(/exp/);
    });

    it('refuses a remembered token once the key that signed it has left the keyring', async () => {
      const jwt = await token(3_600);
      await keyring.verifyJwt(jwt, checks);
      await keyring.rotate();
      await expect(keyring.verifyJwt(jwt, checks)).resolves.toBeTruthy(); // retired, within its grace
      clock += 120_000; // past the grace: the next reload drops the key
      await keyring.rotate();
      await expect(keyring.verifyJwt(jwt, checks)).rejects.toThrow(/unknown signing key/);
    });

    it('verifies a token new to it without yielding to the event loop (no thread pool)', async () => {
      const tokens = await Promise.all(Array.from({ length: 20 }, () => token()));
      let turned = false;
      setImmediate(() => (turned = true));
      const verified = await Promise.all(tokens.map((jwt) => keyring.verifyJwt(jwt, checks)));
      expect(turned).toBe(false);
      expect(verified.every((p) => p.sub === 'd-1' && p.iss === checks.issuer)).toBe(true);
    });

    it('checks what jose checks: type, issuer, audience (or one of several), and the times', async () => {
      // Signed as the keyring signs access tokens, with the type and claims of each case.
      const signed = (typ: string | undefined, claims: Record<string, unknown>) =>
        keyring.signCompact(Buffer.from(JSON.stringify(claims)), typ as string);
      const now = Math.floor(clock / 1000);
      const good = { iss: checks.issuer, aud: checks.audience, sub: 'd-1', iat: now, exp: now + 60 };
      // Both the synchronous checks and jose's (through its options) give the same verdicts.
      const cases: [string | undefined, Record<string, unknown>, boolean][] = [
        ['at+jwt', good, true],
        ['application/AT+JWT', good, true],
        ['JWT', good, false],
        [undefined, good, false],
        ['at+jwt', { ...good, iss: 'https://other.example' }, false],
        ['at+jwt', { ...good, aud: ['x', checks.audience] }, true],
        ['at+jwt', { ...good, aud: ['x'] }, false],
        ['at+jwt', { ...good, aud: undefined }, false],
        ['at+jwt', { ...good, exp: now }, false],
        ['at+jwt', { ...good, nbf: now + 5 }, false],
        ['at+jwt', { ...good, nbf: now }, true],
        ['at+jwt', { ...good, iat: 'yesterday' }, false],
        ['at+jwt', { ...good, exp: String(now + 60) }, false],
      ];
      for (const [typ, claims, accepted] of cases) {
        const jwt = await signed(typ, claims);
        const mine = await keyring.verifyJwt(jwt, checks).then(
          () => true,
          () => false,
        );
        const jose = await jwtVerify(jwt, createLocalJWKSet(keyring.jwks()), {
          ...checks,
          algorithms: ['EdDSA'],
          currentDate: new Date(clock),
        }).then(
          () => true,
          () => false,
        );
        expect([typ, claims, mine]).toEqual([typ, claims, accepted]);
        expect(jose).toBe(accepted);
      }
    });

    it('refuses a token whose signature does not hold, every time', async () => {
      const jwt = await token();
      const [h, p, sig] = jwt.split('.');
      const forged = `${h}.${p}.${sig!.slice(0, -2)}${sig!.endsWith('AA') ? 'BA' : 'AA'}`;
      for (let i = 0; i < 2; i++) await expect(keyring.verifyJwt(forged, checks)).rejects.toThrow();
    });
  });
});
