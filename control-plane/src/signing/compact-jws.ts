/**
 * Compact JWS (RFC 7515 §7.1) with EdDSA over Ed25519 (RFC 8037), verified synchronously with node:crypto.
 *
 * The control plane verifies a device's evidence bundle on every sealed job. jose verifies with WebCrypto,
 * whose work runs on the thread pool: each verification put the request back in the event loop's queue,
 * behind whatever else was ready (about 0.3 ms of verifying cost a request whole milliseconds of waiting
 * under load), and when it ran inside a transaction it held SQLite's one connection meanwhile. Here the
 * same checks run in one synchronous call of about 0.1 ms.
 *
 * Accepted is exactly what this project's signers produce: three base64url parts, a protected header that
 * is a JSON object with `alg` EdDSA, no `crit` (RFC 7515 §4.1.11: a verifier must refuse extensions it
 * does not understand) and no `b64` (RFC 7797's unencoded payloads).
 */
import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { BoundedMap } from '@dpp/shared';

const BASE64URL = /^[A-Za-z0-9_-]*$/;

export interface VerifiedCompactJws {
  header: Record<string, unknown>;
  payload: Buffer;
}

/** Throws an Error saying why when `jws` is not a compact JWS signed by `key` with EdDSA. */
export function verifyEdDsaCompact(jws: string, key: KeyObject): VerifiedCompactJws {
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the key is not an Ed25519 public key');
  const parts = jws.split('.');
  if (parts.length !== 3) throw new Error('a compact JWS has three parts');
  const [head, body, sig] = parts as [string, string, string];
  if (head === '' || sig === '' || ![head, body, sig].every((p) => BASE64URL.test(p)))
    throw new Error('a part of the JWS is not base64url');
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
  } catch {
    throw new Error('the protected header is not JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new Error('the protected header is not a JSON object');
  const h = header as Record<string, unknown>;
  if (h.alg !== 'EdDSA') throw new Error(`alg must be EdDSA, not ${JSON.stringify(h.alg ?? null)}`);
  if ('crit' in h) throw new Error('no critical header parameter (crit) is supported');
  if ('b64' in h) throw new Error('unencoded payloads (b64) are not supported');
  if (!verify(null, Buffer.from(`${head}.${body}`), key, Buffer.from(sig, 'base64url')))
    throw new Error('signature verification failed');
  return { header: h, payload: Buffer.from(body, 'base64url') };
}

const keys = new BoundedMap<string, KeyObject>(1024);

/**
 * The public key of a JWK as stored (its JSON text), imported once and kept (the last 1,024 keys): a
 * device's key verifies its every bundle.
 */
export function publicKeyOfJwk(jwkText: string): KeyObject {
  let key = keys.get(jwkText);
  if (key) return key;
  const jwk = JSON.parse(jwkText) as Record<string, unknown>;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || 'd' in jwk)
    throw new Error('the key is not an Ed25519 public JWK');
  key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string }, format: 'jwk' });
  keys.set(jwkText, key);
  return key;
}
