/**
 * The control plane's signing keys with their windows (GET /api/v2/public/signing-keys):
 * `{ keys: [{ kty, crv, x, kid, signingWindow: { from, until | null } }] }`. Retired keys stay listed, so a
 * receipt signed before a rotation still verifies, but only inside its key's window.
 */
import type { Ed25519Jwk } from './jws.js';
export interface ControlPlaneKey {
    kid: string;
    jwk: Ed25519Jwk;
    from: number;
    until: number | null;
}
/** Parses a signing-keys document; throws a Broken naming what is missing. */
export declare function parseSigningKeys(doc: unknown): ControlPlaneKey[];
/** The key named `kid`, or undefined. */
export declare function controlPlaneKey(keys: readonly ControlPlaneKey[], kid: string): ControlPlaneKey | undefined;
/** Throws unless `at` lies inside the window of the key named `kid`. */
export declare function assertSignedInWindow(key: ControlPlaneKey, at: number, what: string): void;
