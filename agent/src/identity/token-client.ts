/**
 * Access tokens by OAuth client credentials with `private_key_jwt` (RFC 7523 §2.2): a JWT signed by the
 * device key (iss = sub = device id, aud = the advertised token endpoint, 60 s, unique jti). The token is
 * cached until shortly before it expires, concurrent callers share one request, and `invalidate()` drops
 * it after a 401.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { JWT_BEARER_ASSERTION, TokenResponseSchema } from '@dpp/shared';
import { AgentError } from '../errors.js';
import { httpError, httpExchange, joinUrl, type FetchLike } from '../api/http.js';
import type { Logger } from '../log.js';
import type { DeviceKey } from './keys.js';
import type { Identity } from './store.js';

export interface TokenSource {
  /** A valid access token (cached or fresh). */
  token(): Promise<string>;
  /** Forget the cached token (the server refused it). */
  invalidate(): void;
}

export interface TokenClientOptions {
  identity: Identity;
  key: DeviceKey;
  /** Where the token request goes (the enrolled URL, or an override). */
  baseUrl: string;
  timeoutMs: number;
  log: Logger;
  now?: () => number;
  fetch?: FetchLike;
  /** Refresh this long before expiry. */
  refreshMarginMs?: number;
}

export function clientAssertion(key: DeviceKey, deviceId: string, audience: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid })
    .setIssuer(deviceId)
    .setSubject(deviceId)
    .setAudience(audience)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('60s')
    .sign(key.privateKey);
}

export class TokenClient implements TokenSource {
  private cached: { token: string; expiresAt: number } | null = null;
  private inflight: Promise<string> | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: TokenClientOptions) {
    this.now = opts.now ?? Date.now;
  }

  async token(): Promise<string> {
    const margin = this.opts.refreshMarginMs ?? 60_000;
    if (this.cached && this.cached.expiresAt - margin > this.now()) return this.cached.token;
    this.inflight ??= this.fetchToken().finally(() => (this.inflight = null));
    return this.inflight;
  }

  invalidate(): void {
    this.cached = null;
  }

  private async fetchToken(): Promise<string> {
    const { identity, key } = this.opts;
    const started = this.now();
    const answer = await httpExchange(
      {
        method: 'POST',
        url: joinUrl(this.opts.baseUrl, '/api/v2/oauth/token'),
        headers: { 'idempotency-key': randomUUID() },
        json: {
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: await clientAssertion(key, identity.deviceId, identity.tokenEndpoint),
        },
        timeoutMs: this.opts.timeoutMs,
      },
      this.opts.fetch,
    );
    if (answer.status !== 200) {
      const err = httpError('token', answer);
      throw new AgentError(
        answer.status >= 500 || answer.status === 429 ? 'HTTP' : 'TOKEN_FAILED',
        answer.status === 401
          ? 'token: the control plane refused the device (revoked or unknown key)'
          : err.message,
        { status: err.status, apiCode: err.apiCode, details: err.details },
      );
    }
    const parsed = TokenResponseSchema.safeParse(answer.body);
    if (!parsed.success) throw new AgentError('BAD_RESPONSE', 'token: the answer is not an RFC 6749 token');
    this.cached = { token: parsed.data.access_token, expiresAt: started + parsed.data.expires_in * 1000 };
    this.opts.log.debug({ expiresIn: parsed.data.expires_in }, 'access token obtained');
    return parsed.data.access_token;
  }
}
