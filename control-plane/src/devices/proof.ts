import { createHash } from 'node:crypto';
import { type JWK, type JWTPayload, calculateJwkThumbprint, importJWK, jwtVerify } from 'jose';
import type { Ed25519PublicJwk } from '@dpp/shared';
import { ApiError } from '../http/index.js';

/** base64url(SHA-256(token)): binds an enrollment proof to one enrollment token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** The RFC 7638 thumbprint that identifies a device key. */
export function thumbprint(jwk: Ed25519PublicJwk): Promise<string> {
  return calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x } as JWK, 'sha256');
}

const MAX_PROOF_AGE_S = 300;

/**
 * Verifies a JWT signed by the device's own key: proof of possession of the private key that matches
 * `jwk`. Checks signature, `typ`, `aud`, a short lifetime and the claims the caller requires.
 */
export async function verifyDeviceSignedJwt(
  jwt: string,
  jwk: Ed25519PublicJwk,
  opts: {
    typ: string;
    audience: string | string[];
    now: number;
    field: string;
    claims?: Record<string, unknown>;
  },
): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    const key = await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x } as JWK, 'EdDSA');
    ({ payload } = await jwtVerify(jwt, key, {
      algorithms: ['EdDSA'],
      typ: opts.typ,
      audience: opts.audience,
      currentDate: new Date(opts.now),
      maxTokenAge: MAX_PROOF_AGE_S,
      requiredClaims: ['iat', 'exp'],
    }));
  } catch (err) {
    throw ApiError.validation(opts.field, `${opts.field}: ${(err as Error).message}`);
  }
  if (payload.exp! - payload.iat! > MAX_PROOF_AGE_S) {
    throw ApiError.validation(opts.field, `${opts.field}: lifetime must be at most ${MAX_PROOF_AGE_S} s`);
  }
  for (const [k, v] of Object.entries(opts.claims ?? {})) {
    if (payload[k] !== v) throw ApiError.validation(opts.field, `${opts.field}: claim ${k} does not match`);
  }
  return payload;
}
