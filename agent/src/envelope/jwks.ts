/**
 * The control plane's public keys (`/.well-known/jwks.json`), fetched once, cached, and fetched again
 * when a token names a key id the cache does not hold (a rotation), at most once per cooldown. jose's
 * remote key set does exactly this; we keep the options in one place.
 */
import { createRemoteJWKSet, type RemoteJWKSet } from 'jose';

export interface JwksOptions {
  /** Absolute URL of the JWKS. */
  url: string;
  timeoutMs?: number;
  /** No refetch within this long after the last fetch, even for an unknown kid. */
  cooldownMs?: number;
  /** Refetch after this long even when every kid is known. */
  maxAgeMs?: number;
}

export type Jwks = RemoteJWKSet;

export function remoteJwks(options: JwksOptions): Jwks {
  return createRemoteJWKSet(new URL(options.url), {
    timeoutDuration: options.timeoutMs ?? 5000,
    cooldownDuration: options.cooldownMs ?? 30_000,
    cacheMaxAge: options.maxAgeMs ?? 10 * 60_000,
  });
}
