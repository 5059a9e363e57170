/**
 * The control plane's signing keys with their windows (GET /api/v2/public/signing-keys):
 * `{ keys: [{ kty, crv, x, kid, signingWindow: { from, until | null } }] }`. Retired keys stay listed, so a
 * receipt signed before a rotation still verifies, but only inside its key's window.
 */
import type { Ed25519Jwk } from './jws.js';
import { inWindow, obj, Broken, str, time, timeOrNull } from './shape.js';

export interface ControlPlaneKey {
  kid: string;
  jwk: Ed25519Jwk;
  from: number;
  until: number | null;
}

/** Parses a signing-keys document; throws a Broken naming what is missing. */
export function parseSigningKeys(doc: unknown): ControlPlaneKey[] {
  const list = obj(doc, 'the signing keys').keys;
  if (!Array.isArray(list) || list.length === 0) throw new Broken('the signing keys list no key');
  return list.map((k, i) => {
    const key = obj(k, `keys[${i}]`);
    if (key.kty !== 'OKP' || key.crv !== 'Ed25519') throw new Broken(`keys[${i}] is not an Ed25519 key`);
    const window = obj(key.signingWindow, `keys[${i}].signingWindow`);
    return {
      kid: str(key, 'kid', `keys[${i}]`),
      jwk: { kty: 'OKP', crv: 'Ed25519', x: str(key, 'x', `keys[${i}]`) },
      from: time(window, 'from', `keys[${i}].signingWindow`),
      until: timeOrNull(window, 'until', `keys[${i}].signingWindow`),
    };
  });
}

/** The key named `kid`, or undefined. */
export function controlPlaneKey(keys: readonly ControlPlaneKey[], kid: string): ControlPlaneKey | undefined {
  return keys.find((k) => k.kid === kid);
}

/** Throws unless `at` lies inside the window of the key named `kid`. */
export function assertSignedInWindow(key: ControlPlaneKey, at: number, what: string): void {
  if (!inWindow(at, key.from, key.until)) {
    const until = key.until === null ? 'now' : new Date(key.until).toISOString();
    throw new Broken(
      `${what} ${new Date(at).toISOString()} is outside key ${key.kid}'s signing window ` +
        `(${new Date(key.from).toISOString()} to ${until})`,
    );
  }
}
