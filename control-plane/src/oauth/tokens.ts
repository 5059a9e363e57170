import { randomUUID } from 'node:crypto';
import { decodeJwt, type JWTPayload } from 'jose';
import type { ExpressionBuilder } from 'kysely';
import {
  DEVICE_SCOPE,
  type Ed25519PublicJwk,
  JWT_BEARER_ASSERTION,
  type TokenResponse,
  deviceBrokerRules,
  BoundedMap,
} from '@dpp/shared';
import { ApiError, type Authenticator, type Principal, type Unconfirmed } from '../http/index.js';
import type { DeviceService } from '../devices/index.js';
import type { Keyring } from '../signing/index.js';
import { preparedRead, type Database, type Db } from '../store/index.js';
import { apiKeyAuthenticator, findTenant, toTenantInfo } from '../tenants/index.js';
import { verifyDeviceSignedJwt } from '../devices/proof.js';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const ACCESS_TOKEN_AUDIENCE = 'dpp-api';

export interface TokenServiceOptions {
  db: Db;
  keyring: Keyring;
  devices: DeviceService;
  issuer: string;
  accessTokenTtlSeconds: number;
  now?: () => number;
}

export interface TokenRequest {
  grant_type: string;
  scope?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  client_assertion_type?: string | undefined;
  client_assertion?: string | undefined;
}

/**
 * An OAuth error (RFC 6749 §5.2) inside our envelope: the RFC's error name is `details.error`. A client
 * that fails to authenticate gets 401 without a code (as every bad credential here); a malformed request
 * is 400 VALIDATION_ERROR naming the field.
 */
function oauthError(status: 400 | 401, error: string, message: string, field = 'grant_type'): ApiError {
  if (status === 401) {
    return ApiError.plain(401, message, { details: { error }, headers: { 'WWW-Authenticate': 'Bearer' } });
  }
  return ApiError.validation(field, message, { error });
}

/**
 * The token endpoint (RFC 6749 §4.4 client credentials). Devices authenticate with `private_key_jwt`
 * (RFC 7523 §2.2: a JWT signed by the device key, iss = sub = device id, aud = the token endpoint or
 * issuer, short-lived, single-use jti); API clients with client_id = API key id and client_secret = its
 * secret. Access tokens are EdDSA JWTs (RFC 9068 `at+jwt`) that live `accessTokenTtlSeconds`.
 */
export class TokenService {
  private readonly now: () => number;
  readonly tokenEndpoint: string;

  constructor(private readonly opts: TokenServiceOptions) {
    this.now = opts.now ?? Date.now;
    this.tokenEndpoint = `${opts.issuer}/api/v2/oauth/token`;
  }

  async issue(req: TokenRequest): Promise<TokenResponse> {
    if (req.grant_type !== 'client_credentials') {
      throw oauthError(400, 'unsupported_grant_type', 'grant_type must be client_credentials');
    }
    if (req.client_assertion !== undefined || req.client_assertion_type !== undefined)
      return this.issueForDevice(req);
    if (req.client_id && req.client_secret)
      return this.issueForApiClient(req.client_id, req.client_secret, req.scope);
    throw oauthError(
      401,
      'invalid_client',
      'Authenticate with client_assertion (devices) or client_id and client_secret',
    );
  }

  private async issueForDevice(req: TokenRequest): Promise<TokenResponse> {
    if (req.client_assertion_type !== JWT_BEARER_ASSERTION || !req.client_assertion) {
      throw oauthError(
        400,
        'invalid_request',
        `client_assertion_type must be ${JWT_BEARER_ASSERTION}`,
        'client_assertion_type',
      );
    }
    let claims: JWTPayload;
    try {
      claims = decodeJwt(req.client_assertion);
    } catch {
      throw oauthError(401, 'invalid_client', 'client_assertion is not a JWT');
    }
    const deviceId = typeof claims.sub === 'string' ? claims.sub : '';
    if (claims.iss !== deviceId || (req.client_id !== undefined && req.client_id !== deviceId)) {
      throw oauthError(401, 'invalid_client', 'client_assertion iss and sub must both be the device id');
    }
    const device = deviceId ? await this.opts.devices.findActive(deviceId) : undefined;
    if (!device) throw oauthError(401, 'invalid_client', 'Unknown or revoked device');
    let verified: JWTPayload;
    try {
      verified = await verifyDeviceSignedJwt(
        req.client_assertion,
        JSON.parse(device.public_jwk) as Ed25519PublicJwk,
        {
          typ: 'JWT',
          audience: [this.tokenEndpoint, this.opts.issuer],
          now: this.now(),
          field: 'client_assertion',
        },
      );
    } catch (err) {
      throw oauthError(401, 'invalid_client', (err as ApiError).message);
    }
    if (typeof verified.jti !== 'string' || verified.jti.length < 8) {
      throw oauthError(401, 'invalid_client', 'client_assertion needs a jti of at least 8 characters');
    }
    const used = await this.opts.db
      .insertInto('oauth_assertions')
      .values({
        client_id: deviceId,
        jti: verified.jti,
        expires_at: new Date(verified.exp! * 1000).toISOString(),
      })
      .onConflict((oc) => oc.columns(['client_id', 'jti']).doNothing())
      .executeTakeFirst();
    if (Number(used.numInsertedOrUpdatedRows ?? 0) !== 1) {
      throw oauthError(401, 'invalid_client', 'client_assertion was already used (jti replay)');
    }
    if (req.scope && req.scope.split(' ').some((s) => s !== DEVICE_SCOPE)) {
      throw oauthError(400, 'invalid_scope', `devices may only request ${DEVICE_SCOPE}`, 'scope');
    }
    await this.opts.devices.touch(deviceId);
    return this.mint({ sub: deviceId, tenant: device.tenant_id, kind: 'device', scope: DEVICE_SCOPE });
  }

  private async issueForApiClient(
    clientId: string,
    secret: string,
    scope: string | undefined,
  ): Promise<TokenResponse> {
    const principal = await apiKeyAuthenticator(this.opts.db, this.now)(secret);
    if (!principal || principal.id !== clientId)
      throw oauthError(401, 'invalid_client', 'Unknown client or wrong secret');
    const granted = [...principal.scopes];
    const requested = scope ? scope.split(' ').filter(Boolean) : granted;
    const outside = requested.filter((s) => !granted.includes(s) && !granted.includes('*'));
    if (outside.length) {
      throw oauthError(400, 'invalid_scope', `Scopes not granted to this key: ${outside.join(' ')}`, 'scope');
    }
    return this.mint({
      sub: clientId,
      tenant: principal.tenant.id,
      kind: 'api_key',
      scope: requested.join(' '),
    });
  }

  private async mint(c: {
    sub: string;
    tenant: string;
    kind: 'device' | 'api_key';
    scope: string;
  }): Promise<TokenResponse> {
    const ttl = this.opts.accessTokenTtlSeconds;
    const access_token = await this.opts.keyring.signJwt(
      {
        iss: this.opts.issuer,
        aud: ACCESS_TOKEN_AUDIENCE,
        sub: c.sub,
        client_id: c.sub,
        tenant_id: c.tenant,
        principal_type: c.kind,
        scope: c.scope,
        jti: randomUUID(),
        // A device's broker rules, in EMQX's JWT `acl` claim format (v5.5+): a broker that takes access
        // tokens as MQTT passwords can enforce them without asking the control plane.
        ...(c.kind === 'device'
          ? {
              acl: [
                ...deviceBrokerRules(c.tenant, c.sub).map((r) => ({ permission: 'allow', ...r })),
                { permission: 'deny', action: 'all', topic: '#' },
              ],
            }
          : {}),
      },
      { typ: ACCESS_TOKEN_TYPE, expiresInSeconds: ttl },
    );
    return { access_token, token_type: 'Bearer', expires_in: ttl, scope: c.scope };
  }

  /** Deletes remembered client-assertion ids past their expiry. */
  async purgeAssertions(): Promise<void> {
    await this.opts.db
      .deleteFrom('oauth_assertions')
      .where('expires_at', '<', new Date(this.now()).toISOString())
      .execute();
  }
}

/** Device principals remembered by an authenticator (`accessTokenAuthenticator`), the oldest read first out. */
const DEVICES_REMEMBERED = 10_000;

/** The columns a device's principal is made of: the device's, then its tenant's. */
const DEVICE_PRINCIPAL_COLUMNS = [
  'd.printer_names',
  'd.public_jwk',
  't.id',
  't.name',
  't.tier',
  't.sandbox',
  't.sandbox_expires_at',
  't.created_at',
] as const;

/** A device's row as its principal is read: the device, active, with its tenant. */
function devicePrincipalRow(db: Db, deviceId: string) {
  return db
    .selectFrom('devices as d')
    .innerJoin('tenants as t', 't.id', 'd.tenant_id')
    .select(DEVICE_PRINCIPAL_COLUMNS)
    .where('d.id', '=', deviceId)
    .where('d.status', '=', 'active');
}

type DeviceRow = NonNullable<Awaited<ReturnType<ReturnType<typeof devicePrincipalRow>['executeTakeFirst']>>>;

/** {@link devicePrincipalRow} as a prepared read: built and compiled once per store, not on every device call. */
const principalRows = preparedRead(devicePrincipalRow);

/**
 * Whether a device's principal is still the one read (`Unconfirmed.stillCurrent`): the read that made it
 * (`devicePrincipalRow`: the device, active, with its tenant) still finds the device with every column its
 * principal was made of unchanged.
 */
function stillCurrent(eb: ExpressionBuilder<Database, never>, db: Db, deviceId: string, row: DeviceRow) {
  return eb.exists(
    devicePrincipalRow(db, deviceId).where((w) =>
      w.and(
        DEVICE_PRINCIPAL_COLUMNS.map((column) => {
          const value = row[column.slice(2) as keyof DeviceRow];
          return value === null ? w(column, 'is', null) : w(column, '=', value);
        }),
      ),
    ),
  );
}

/**
 * Each remembered row's `stillCurrent`, made once: the row stays the same object until a read replaces it, so
 * the statement that checks it is compiled once per row (aidc/claim.ts `compiledCondition`), not per call.
 */
const conditions = new WeakMap<DeviceRow, Unconfirmed['stillCurrent']>();

/** A device's principal from its row: the row's tenant must be the one the token names. */
function devicePrincipal(
  claims: JWTPayload,
  scopes: ReadonlySet<string>,
  row: DeviceRow,
): Extract<Principal, { type: 'device' }> | null {
  // The row's id is its tenant's: a token names the device's own tenant, or it is refused.
  if (row.id !== claims.tenant_id) return null;
  return {
    type: 'device',
    id: String(claims.sub),
    tenant: toTenantInfo(row),
    scopes,
    printerNames: JSON.parse(row.printer_names) as string[],
    publicJwk: row.public_jwk,
  };
}

/**
 * Verifies an access token and re-checks its subject in the store, so revocation takes effect at once: a
 * device's principal (the active device with its tenant, read now) or an API client's. With `remembered`, a
 * device whose principal was read before (kept in `memory.devices`) gets that principal without a read,
 * marked `unconfirmed`: only an operation that checks it in its own statement (`stillCurrent`) may be given
 * one (http/authenticate.ts, RouteAuth.checkedInStatement).
 */
export async function principalFromAccessToken(
  token: string,
  deps: { keyring: Keyring; db: Db; issuer: string },
  memory?: { devices: BoundedMap<string, DeviceRow>; remembered: boolean },
): Promise<Principal | null> {
  let claims: JWTPayload;
  try {
    claims = await deps.keyring.verifyJwt(token, {
      issuer: deps.issuer,
      audience: ACCESS_TOKEN_AUDIENCE,
      typ: ACCESS_TOKEN_TYPE,
    });
  } catch {
    return null;
  }
  const sub = String(claims.sub);
  const scopes = new Set(
    String(claims.scope ?? '')
      .split(' ')
      .filter(Boolean),
  );
  if (claims.principal_type === 'device') {
    const read = async (): Promise<Principal | null> => {
      // The active device with its tenant, in one read.
      const [row] = await principalRows(deps.db, sub);
      if (row) memory?.devices.set(sub, row);
      else memory?.devices.delete(sub);
      return row ? devicePrincipal(claims, scopes, row) : null;
    };
    const known = memory?.remembered ? memory.devices.get(sub) : undefined;
    if (!known) return read();
    const principal = devicePrincipal(claims, scopes, known);
    if (!principal) return read();
    let condition = conditions.get(known);
    if (!condition) {
      condition = (eb) => stillCurrent(eb, deps.db, sub, known);
      conditions.set(known, condition);
    }
    return { ...principal, unconfirmed: { stillCurrent: condition, confirm: read } };
  }
  if (claims.principal_type === 'api_key') {
    const key = await deps.db
      .selectFrom('api_keys')
      .select(['id', 'tenant_id', 'scopes'])
      .where('id', '=', sub)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!key || key.tenant_id !== claims.tenant_id) return null;
    const tenant = await findTenant(deps.db, key.tenant_id);
    if (!tenant) return null;
    const current = JSON.parse(key.scopes) as string[];
    // A token never carries more than its key has now (scopes may have shrunk since it was minted).
    const effective = current.includes('*')
      ? scopes
      : new Set([...scopes].filter((s) => current.includes(s)));
    return { type: 'api_key', id: sub, tenant, scopes: effective };
  }
  return null;
}

/**
 * Access tokens as credentials. Each device principal read is remembered, so that an operation which checks
 * it in its own statement can be given it without a read (`principalFromAccessToken`).
 */
export function accessTokenAuthenticator(
  deps: Parameters<typeof principalFromAccessToken>[1],
): Authenticator {
  const devices = new BoundedMap<string, DeviceRow>(DEVICES_REMEMBERED);
  return async (credential, opts) =>
    credential.split('.').length === 3
      ? principalFromAccessToken(credential, deps, { devices, remembered: opts?.remembered === true })
      : null;
}
