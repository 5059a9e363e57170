import {
  type JsonWebKey,
  type KeyObject,
  createPrivateKey,
  createPublicKey,
  randomUUID,
  sign,
} from 'node:crypto';
import {
  type CryptoKey,
  type JWK,
  type JWTPayload,
  type JWTVerifyOptions,
  SignJWT,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
} from 'jose';
import { BoundedMap } from '@dpp/shared';
import { type Db, type SecretBox, inUnitOfWork, secretContext } from '../store/index.js';
import { verifyEdDsaCompact } from './compact-jws.js';

/** Verified tokens remembered (Keyring.verifyJwt). */
const VERIFIED_TOKENS_KEPT = 10_000;

interface LoadedKey {
  kid: string;
  createdAt: string;
  privateKey: CryptoKey;
  /** The same private key for node:crypto, which signs synchronously (see signCompact). */
  signingKey: KeyObject;
  publicKey: CryptoKey;
  /** The same public key for node:crypto, which verifies synchronously (see verifyJwt). */
  verifyKey: KeyObject;
  publicJwk: JWK;
}

/** A public key with the window it signed in (`until` null: it is the current key). */
export type SigningHistoryKey = JWK & { signingWindow: { from: string; until: string | null } };

export interface KeyringOptions {
  db: Db;
  /** Seals private keys at rest (SECRETS_KEY). */
  secrets: SecretBox;
  now?: () => number;
  /** Retired keys stay in the JWKS this long, so tokens and envelopes they signed still verify. */
  retiredGraceMs?: number;
  /** How often the keys are read again from the store (another replica may have rotated). */
  refreshMs?: number;
}

/**
 * The control plane's Ed25519 signing keys (access tokens, AIDC envelopes). Kept in the store so every
 * replica signs and verifies with the same set; the newest key signs, all unretired keys verify and are
 * published at /.well-known/jwks.json. `rotate()` adds a key and retires the previous one after a grace.
 *
 * Signing and verifying use the keys in memory and never touch the store, because they run inside units of
 * work (a claim signs its envelope in the claim's transaction). The keys are read again on a timer of
 * their own (`start()`), outside any transaction; a verify that meets an unknown `kid` reads them at once,
 * unless it runs inside a unit of work.
 */
export class Keyring {
  private keys: LoadedKey[] = [];
  private readonly now: () => number;
  private readonly graceMs: number;
  private loadedAt = 0;
  private readonly verified = new BoundedMap<string, { payload: JWTPayload; kid: string }>(
    VERIFIED_TOKENS_KEPT,
  );
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: KeyringOptions) {
    this.now = opts.now ?? Date.now;
    this.graceMs = opts.retiredGraceMs ?? 24 * 3_600_000;
  }

  /** Loads the keys; creates the first one on a fresh store. */
  async init(): Promise<void> {
    await this.reload();
    if (this.keys.length === 0) {
      await this.insertNewKey();
      await this.reload();
    }
  }

  /** Reads the keys again every `refreshMs` (60 s) until `stop()`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.reload().catch(() => undefined); // the keys in memory stay valid; the next tick tries again
    }, this.opts.refreshMs ?? 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Adds a new signing key; the previous ones are retired and stay published for the grace period. */
  async rotate(): Promise<string> {
    const retireAt = new Date(this.now() + this.graceMs).toISOString();
    await this.opts.db
      .updateTable('signing_keys')
      .set({ retired_at: retireAt })
      .where('retired_at', 'is', null)
      .execute();
    const kid = await this.insertNewKey();
    await this.reload();
    return kid;
  }

  /** The public keys as a JWK Set (RFC 7517 §5). */
  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  /**
   * Every key this control plane ever signed with, retired ones included, each with the window it signed in:
   * from its creation until the next key's (null while it is the current one). What it signed (seal receipts,
   * envelopes, enrollment statements) stays verifiable for as long as the passports live, judged by the time it
   * claims to have been signed. Read from the store; no private key is loaded.
   */
  async signingHistory(): Promise<SigningHistoryKey[]> {
    const rows = await this.opts.db
      .selectFrom('signing_keys')
      .select(['kid', 'public_jwk', 'created_at'])
      .orderBy('created_at', 'asc')
      .orderBy('kid', 'asc')
      .execute();
    return rows.map((r, i) => ({
      ...(JSON.parse(r.public_jwk) as JWK),
      signingWindow: { from: r.created_at, until: rows[i + 1]?.created_at ?? null },
    }));
  }

  async signJwt(claims: JWTPayload, opts: { typ: string; expiresInSeconds: number }): Promise<string> {
    const key = this.current();
    const iat = Math.floor(this.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: opts.typ })
      .setIssuedAt(iat)
      .setExpirationTime(iat + opts.expiresInSeconds)
      .setJti(claims.jti ?? randomUUID())
      .sign(key.privateKey);
  }

  /**
   * Signs an arbitrary payload as a compact JWS (RFC 7515 §7.1; AIDC envelopes, seal receipts, tree heads).
   * The signature is made synchronously with node:crypto, so a unit of work that signs (a claim signs its
   * envelopes, a seal its receipt inside the transaction) never yields to the event loop while it holds
   * SQLite's one connection: WebCrypto's sign runs on the thread pool, and while it did, other requests'
   * work ran on this thread with the connection still held (about 0.1 ms of signing held it for whole
   * milliseconds under load).
   */
  signCompact(payload: Uint8Array, typ: string): Promise<string> {
    const key = this.current();
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: key.kid, typ })).toString('base64url');
    const input = `${header}.${Buffer.from(payload).toString('base64url')}`;
    const signature = sign(null, Buffer.from(input), key.signingKey).toString('base64url');
    return Promise.resolve(`${input}.${signature}`);
  }

  /**
   * Verifies a JWT signed by one of these keys (access tokens). A token that verified is remembered until it
   * expires (the last 10,000), keyed by its text and the checks asked for: a device presents the same access
   * token on every call. A remembered token is still refused once expired, before its `nbf`, or when the
   * key that signed it is no longer in the keyring. A token not remembered is verified synchronously with
   * node:crypto (`verifySync`) when its key is loaded and only the issuer, audience and type are asked for:
   * WebCrypto's verify runs on the thread pool, where a fleet's first calls after a restart (every token new
   * to this process) queued behind each other and behind any other crypto, 80-120 ms each for 50 devices
   * at once; synchronously each costs about 0.1 ms of this thread.
   */
  async verifyJwt(token: string, options: JWTVerifyOptions): Promise<JWTPayload> {
    const { issuer, audience, typ, ...rest } = options;
    const rememberable = Object.keys(rest).length === 0;
    const cacheKey = rememberable ? JSON.stringify([issuer, audience, typ, token]) : '';
    const known = rememberable ? this.verified.get(cacheKey) : undefined;
    const nowSeconds = this.now() / 1000;
    if (known) {
      const { exp, nbf } = known.payload;
      const timely = exp! > nowSeconds && (nbf === undefined || nbf <= nowSeconds);
      if (timely && this.keys.some((k) => k.kid === known.kid)) return known.payload;
      this.verified.delete(cacheKey);
    }
    const verified =
      (rememberable && this.verifySync(token, { issuer, audience, typ }, nowSeconds)) ||
      (await jwtVerify(token, (header) => this.keyFor(header.kid), {
        algorithms: ['EdDSA'],
        currentDate: new Date(this.now()),
        ...options,
      }));
    const { payload, protectedHeader } = verified;
    if (rememberable && typeof payload.exp === 'number' && typeof protectedHeader.kid === 'string') {
      this.verified.set(cacheKey, { payload, kid: protectedHeader.kid });
    }
    return payload;
  }

  /**
   * `verifyJwt`'s checks made synchronously, as jose's jwtVerify makes them for these options: the EdDSA
   * signature of a loaded key (`verifyEdDsaCompact`), the header's `typ`, a JSON object payload, `iss`,
   * `aud` (a string or an array holding it), `exp` and `nbf` against now (no clock tolerance) and a numeric
   * `iat`. Undefined when the token names a key not loaded here (jwtVerify reloads the keys first); throws
   * when a check fails.
   */
  private verifySync(
    token: string,
    checks: Pick<JWTVerifyOptions, 'issuer' | 'audience' | 'typ'>,
    nowSeconds: number,
  ): { payload: JWTPayload; protectedHeader: { kid?: string } } | undefined {
    const head = token.slice(0, Math.max(0, token.indexOf('.')));
    let kid: unknown;
    try {
      kid = (JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    } catch {
      throw new Error('the protected header is not JSON');
    }
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) return undefined;
    const { header, payload: bytes } = verifyEdDsaCompact(token, key.verifyKey);
    const normal = (t: unknown) =>
      typeof t === 'string' ? t.toLowerCase().replace(/^application\//, '') : t;
    if (checks.typ !== undefined && normal(header.typ) !== normal(checks.typ))
      throw new Error('unexpected "typ" JWT header value');
    let payload: unknown;
    try {
      payload = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new Error('JWT Claims Set must be a top-level JSON object');
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      throw new Error('JWT Claims Set must be a top-level JSON object');
    const claims = payload as JWTPayload;
    const issuers = checks.issuer === undefined ? undefined : [checks.issuer].flat();
    if (issuers && !issuers.includes(claims.iss as string)) throw new Error('unexpected "iss" claim value');
    const audiences = checks.audience === undefined ? undefined : [checks.audience].flat();
    if (audiences && ![claims.aud].flat().some((a) => audiences.includes(a as string)))
      throw new Error('unexpected "aud" claim value');
    for (const claim of ['iat', 'nbf', 'exp'] as const) {
      if (claims[claim] !== undefined && typeof claims[claim] !== 'number')
        throw new Error(`"${claim}" claim must be a number`);
    }
    if (claims.nbf !== undefined && claims.nbf > nowSeconds)
      throw new Error('"nbf" claim timestamp check failed');
    if (claims.exp !== undefined && claims.exp <= nowSeconds)
      throw new Error('"exp" claim timestamp check failed');
    return { payload: claims, protectedHeader: header as { kid?: string } };
  }

  private async keyFor(kid: string | undefined): Promise<CryptoKey> {
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && this.now() - this.loadedAt > 1_000 && !inUnitOfWork()) {
      await this.reload(); // a replica may have rotated
      key = this.keys.find((k) => k.kid === kid);
    }
    if (!key) throw new Error(`unknown signing key ${String(kid)}`);
    return key.publicKey;
  }

  private current(): LoadedKey {
    const key = this.keys[0];
    if (!key) throw new Error('keyring not initialised');
    return key;
  }

  private async reload(): Promise<void> {
    const nowIso = new Date(this.now()).toISOString();
    const rows = await this.opts.db
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', nowIso)]))
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .execute();
    const active = rows.filter((r) => r.retired_at === null);
    const ordered = [...active, ...rows.filter((r) => r.retired_at !== null)];
    this.keys = await Promise.all(
      ordered.map(async (r) => {
        const publicJwk = JSON.parse(r.public_jwk) as JWK;
        const privateJwk = JSON.parse(
          this.opts.secrets.open(r.private_jwk, secretContext.signingKey(r.kid)),
        ) as JWK;
        return {
          kid: r.kid,
          createdAt: r.created_at,
          privateKey: (await importJWK(privateJwk, 'EdDSA')) as CryptoKey,
          signingKey: createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }),
          publicKey: (await importJWK(publicJwk, 'EdDSA')) as CryptoKey,
          verifyKey: createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' }),
          publicJwk,
        };
      }),
    );
    this.loadedAt = this.now();
  }

  private async insertNewKey(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' };
    await this.opts.db
      .insertInto('signing_keys')
      .values({
        kid,
        alg: 'EdDSA',
        private_jwk: this.opts.secrets.seal(JSON.stringify(privateJwk), secretContext.signingKey(kid)),
        public_jwk: JSON.stringify(publicJwk),
        created_at: new Date(this.now()).toISOString(),
        retired_at: null,
      })
      .onConflict((oc) => oc.column('kid').doNothing())
      .execute();
    return kid;
  }
}
