import { hash, randomBytes, randomUUID } from 'node:crypto';
import { ALL_SCOPES } from '@dpp/shared';
import { recordAudit } from '../audit/index.js';
import { ApiError, type Actor, type Authenticator } from '../http/index.js';
import { type ApiKeyTable, type Db, preparedRead } from '../store/index.js';
import { toTenantInfo } from './tenants.js';

/** Secrets look like `dpp_sk_<43 base64url chars>`; only their SHA-256 is stored. */
export const API_KEY_PREFIX = 'dpp_sk_';

export interface ApiKeyView {
  id: string;
  name: string;
  /** The first characters of the secret, to recognise a key in lists. */
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
  rotatedFrom: string | null;
  lastUsedAt: string | null;
}

/** One call, no Hash object: this runs on every request an API key authenticates. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function generateSecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

function view(row: ApiKeyTable): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    rotatedFrom: row.rotated_from,
    lastUsedAt: row.last_used_at,
  };
}

export interface AuditContext {
  actor: Actor;
  correlationId?: string | null;
}

/**
 * Creates a key and returns its secret, the only time it is ever shown. Runs inside the caller's
 * transaction when given one.
 */
export async function createApiKey(
  db: Db,
  input: { tenantId: string; name: string; scopes: readonly string[]; secret?: string; rotatedFrom?: string },
  audit: AuditContext,
): Promise<ApiKeyView & { secret: string }> {
  const secret = input.secret ?? generateSecret();
  const row: ApiKeyTable = {
    id: randomUUID(),
    tenant_id: input.tenantId,
    name: input.name,
    prefix: `${secret.slice(0, API_KEY_PREFIX.length + 4)}…`,
    secret_hash: hashSecret(secret),
    scopes: JSON.stringify([...new Set(input.scopes)].sort()),
    created_at: new Date().toISOString(),
    revoked_at: null,
    rotated_from: input.rotatedFrom ?? null,
    last_used_at: null,
  };
  await db.insertInto('api_keys').values(row).execute();
  await recordAudit(db, {
    tenantId: input.tenantId,
    actor: audit.actor,
    action: input.rotatedFrom ? 'api_key.rotated' : 'api_key.created',
    resource: { type: 'api_key', id: row.id },
    correlationId: audit.correlationId,
    details: { scopes: JSON.parse(row.scopes), rotatedFrom: row.rotated_from },
  });
  return { ...view(row), secret };
}

export async function listApiKeys(db: Db, tenantId: string): Promise<ApiKeyView[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map(view);
}

const apiKeyRow = preparedRead((db, tenantId: string, id: string) =>
  db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
);

/** Authorization before existence: another tenant's key is simply not found. */
export async function getApiKey(db: Db, tenantId: string, id: string): Promise<ApiKeyView> {
  const [row] = await apiKeyRow(db, tenantId, id);
  if (!row) throw ApiError.notFound('API key');
  return view(row);
}

async function revokeGuarded(db: Db, tenantId: string, id: string, at: string): Promise<void> {
  const res = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return;
  await getApiKey(db, tenantId, id); // 404 when it is not ours
  throw new ApiError('ALREADY_REVOKED', 'This API key is already revoked', { details: { id } });
}

/** Revokes a key; a second revoke is 409 ALREADY_REVOKED (api-v2.md, Authentication §6). */
export async function revokeApiKey(
  db: Db,
  tenantId: string,
  id: string,
  audit: AuditContext,
): Promise<ApiKeyView> {
  return db.transaction().execute(async (trx) => {
    await revokeGuarded(trx, tenantId, id, new Date().toISOString());
    await recordAudit(trx, {
      tenantId,
      actor: audit.actor,
      action: 'api_key.revoked',
      resource: { type: 'api_key', id },
      correlationId: audit.correlationId,
    });
    return getApiKey(trx, tenantId, id);
  });
}

/**
 * Rotates a key: the old id is revoked and a new key with the same name and scopes is returned (its new
 * `id` and its secret), in one transaction.
 */
export async function rotateApiKey(
  db: Db,
  tenantId: string,
  id: string,
  audit: AuditContext,
): Promise<ApiKeyView & { secret: string }> {
  return db.transaction().execute(async (trx) => {
    const old = await getApiKey(trx, tenantId, id);
    await revokeGuarded(trx, tenantId, id, new Date().toISOString());
    await recordAudit(trx, {
      tenantId,
      actor: audit.actor,
      action: 'api_key.revoked',
      resource: { type: 'api_key', id },
      correlationId: audit.correlationId,
      details: { reason: 'rotated' },
    });
    return createApiKey(trx, { tenantId, name: old.name, scopes: old.scopes, rotatedFrom: id }, audit);
  });
}

const LAST_USED_WRITE_EVERY_MS = 60_000;

/** The live key of a secret's hash, with its tenant: built and compiled once, run on every authenticated request. */
const credentialRow = preparedRead((db, secretHash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
    .select([
      'api_keys.id as key_id',
      'api_keys.scopes',
      'tenants.id',
      'tenants.name',
      'tenants.tier',
      'tenants.sandbox',
      'tenants.sandbox_expires_at',
      'tenants.created_at',
    ])
    .where('api_keys.secret_hash', '=', secretHash)
    .where('api_keys.revoked_at', 'is', null),
);

/** Resolves `dpp_sk_...` secrets (and seed secrets of any shape) to their tenant and scopes. */
export function apiKeyAuthenticator(db: Db, now: () => number = Date.now): Authenticator {
  const lastWrite = new Map<string, number>();
  return async (credential) => {
    const [row] = await credentialRow(db, hashSecret(credential));
    if (!row) return null;
    const t = now();
    if ((lastWrite.get(row.key_id) ?? 0) + LAST_USED_WRITE_EVERY_MS < t) {
      lastWrite.set(row.key_id, t);
      await db
        .updateTable('api_keys')
        .set({ last_used_at: new Date(t).toISOString() })
        .where('id', '=', row.key_id)
        .execute();
    }
    const scopes = JSON.parse(row.scopes) as string[];
    return {
      type: 'api_key',
      id: row.key_id,
      tenant: toTenantInfo(row),
      scopes: new Set(scopes.includes(ALL_SCOPES) ? [ALL_SCOPES] : scopes),
    };
  };
}
