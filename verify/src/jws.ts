/**
 * Compact JWS as the proof uses it (label-proof.md, "What each piece signs"): EdDSA (Ed25519) only, the
 * `typ` of each piece, `kid` naming the key, and a payload that is RFC 8785 canonical JSON byte for byte.
 */
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { canonicalJson } from './jcs.js';
import { Broken, isObject, type Json } from './shape.js';

export const TYP = {
  evidence: 'dpp-evidence+jws',
  deviceStatement: 'dpp-device-statement+jws',
  sealReceipt: 'dpp-seal-receipt+jws',
  treeHead: 'dpp-tree-head+jws',
} as const;

/** An Ed25519 public key as a JWK (RFC 8037). */
export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

/** The payload of a compact JWS, parsed but NOT verified: for comparing one link with the next. */
export function peekPayload(jws: unknown): Json | null {
  if (typeof jws !== 'string') return null;
  const part = jws.split('.')[1];
  if (part === undefined) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** The `kid` of a compact JWS's protected header (unverified). */
export function headerKid(jws: string): string {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(jws).kid;
  } catch {
    throw new Broken('not a compact JWS');
  }
  if (typeof kid !== 'string' || kid === '') throw new Broken('its header names no kid');
  return kid;
}

/**
 * Verifies a compact JWS of type `typ` with the key `keyFor(kid)` returns, and returns its payload. Throws a
 * Broken saying what is wrong: another typ or alg, an unknown kid, a bad signature, a payload that is not
 * canonical JSON.
 */
export async function verifyJws(
  jws: unknown,
  typ: string,
  keyFor: (kid: string) => Ed25519Jwk | undefined,
): Promise<{ payload: Json; kid: string }> {
  if (typeof jws !== 'string' || !/^[\w-]+\.[\w-]*\.[\w-]+$/.test(jws)) throw new Broken('not a compact JWS');
  let header;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new Broken('not a compact JWS');
  }
  if (header.typ !== typ) throw new Broken(`typ is ${JSON.stringify(header.typ)}, not ${typ}`);
  if (header.alg !== 'EdDSA') throw new Broken(`alg is ${JSON.stringify(header.alg)}, not EdDSA`);
  const kid = headerKid(jws);
  const jwk = keyFor(kid);
  if (jwk === undefined) throw new Broken(`no key with kid ${kid}`);
  let payloadBytes: Uint8Array;
  try {
    const key = await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x } satisfies JWK, 'EdDSA');
    ({ payload: payloadBytes } = await compactVerify(jws, key, { algorithms: ['EdDSA'] }));
  } catch {
    throw new Broken(`the signature does not verify with key ${kid}`);
  }
  let text: string;
  let payload: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(payloadBytes);
    payload = JSON.parse(text);
  } catch {
    throw new Broken('its payload is not JSON');
  }
  if (!isObject(payload)) throw new Broken('its payload is not a JSON object');
  if (canonicalJson(payload) !== text) throw new Broken('its payload is not canonical JSON (RFC 8785)');
  return { payload, kid };
}
