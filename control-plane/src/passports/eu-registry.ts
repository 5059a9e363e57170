/**
 * registerDPP (api-v2.md names it by its errors only): registers a published passport in the EU digital
 * product passport registry (ESPR, Regulation (EU) 2024/1781, Art. 13). The registry keeps a passport's
 * unique product identifier and where the passport is served; here that is its Digital Link, registered first
 * by publish-dpp, with the signed registration credential that commits to the version's Merkle root.
 *
 * The registry is reached through a connector the operator configures (EU_REGISTRY_URL): one HTTP POST of the
 * registration record per passport version, with an Idempotency-Key of that version so the registry can tell a
 * retry. What the registry accepted is recorded, never updated; a repeat for the same version answers it.
 * In production the caller's eIDAS actor identity cannot be bound yet, so the route refuses before this runs.
 */
import { recordAudit } from '../audit/index.js';
import { ApiError } from '../http/index.js';
import { type Db, type EuRegistryRegistrationTable, isUniqueViolation, uuidv7 } from '../store/index.js';
import type { PassportWriteContext } from './publish.js';
import { appendLog, getPassport, getVersionById } from './queries.js';

export interface EuRegistryDeps {
  db: Db;
  /** The registry connector; undefined when none is configured. */
  registryUrl: string | undefined;
  publicBaseUrl: string;
  timeoutMs?: number;
}

export interface EuRegistration {
  dppId: string;
  version: number;
  versionId: string;
  uniqueProductIdentifier: string;
  registryReference: string | null;
  registeredAt: string;
}

function view(row: EuRegistryRegistrationTable): EuRegistration {
  return {
    dppId: row.product_id,
    version: row.version,
    versionId: row.version_id,
    uniqueProductIdentifier: row.digital_link,
    registryReference: row.registry_reference,
    registeredAt: row.registered_at,
  };
}

/** The registrations of a passport, oldest first. */
export async function euRegistrations(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<EuRegistration[]> {
  const rows = await db
    .selectFrom('eu_registry_registrations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('version')
    .execute();
  return rows.map(view);
}

/**
 * The checks, in order: the passport exists (404 PASSPORT_NOT_FOUND); a registry connector is configured and
 * the workspace is not a sandbox (503 REGISTRY_UNAVAILABLE, nothing sent); the passport's current version is
 * published and its Digital Link registered by publish-dpp for that version (422 PASSPORT_NOT_PUBLISHABLE).
 * Then the record is sent; a registry that does not accept it is 503 REGISTRY_UNAVAILABLE with what it
 * answered, and nothing is recorded.
 */
export async function registerInEuRegistry(
  deps: EuRegistryDeps,
  ctx: PassportWriteContext & { sandbox: boolean },
  productId: string,
): Promise<{ created: boolean; registration: EuRegistration }> {
  const { db } = deps;
  const passport = await getPassport(db, ctx.tenantId, productId);
  if (!passport)
    throw new ApiError('PASSPORT_NOT_FOUND', 'Passport not found', { details: { dppId: productId } });
  if (ctx.sandbox || deps.registryUrl === undefined) {
    throw new ApiError(
      'REGISTRY_UNAVAILABLE',
      ctx.sandbox
        ? 'The EU registry is never reached from the sandbox; nothing was sent'
        : 'No EU registry connector is configured (EU_REGISTRY_URL); nothing was sent',
      { details: { registry: 'EU_DPP_REGISTRY', sandbox: ctx.sandbox } },
    );
  }
  const identifier = await db
    .selectFrom('dpp_identifiers')
    .selectAll()
    .where('product_id', '=', productId)
    .executeTakeFirst();
  const version = passport.current_version_id
    ? await getVersionById(db, passport.current_version_id)
    : undefined;
  if (!version || !identifier || identifier.version_id !== version.id) {
    throw new ApiError(
      'PASSPORT_NOT_PUBLISHABLE',
      'Register the Digital Link of the current version first (POST /api/v2/products/{id}/publish-dpp); nothing was sent',
      {
        details: {
          dppId: productId,
          published: version !== undefined,
          digitalLinkRegistered: identifier !== undefined,
          registeredVersion: identifier?.version ?? null,
          currentVersion: version?.version ?? null,
        },
      },
    );
  }
  const existing = await db
    .selectFrom('eu_registry_registrations')
    .selectAll()
    .where('product_id', '=', productId)
    .where('version_id', '=', version.id)
    .executeTakeFirst();
  if (existing) return { created: false, registration: view(existing) };

  const at = new Date(ctx.now()).toISOString();
  const record = {
    uniqueProductIdentifier: identifier.digital_link,
    gtin: identifier.gtin,
    serialNumber: identifier.serial,
    passportUrl: `${deps.publicBaseUrl}/api/v2/public/passport/${productId}`,
    version: version.version,
    versionHash: version.hash,
    merkleRoot: version.merkle_root,
    registrationCredential: JSON.parse(identifier.credential) as unknown,
    submittedAt: at,
  };
  const answer = await send(deps.registryUrl, record, `${productId}:${version.id}`, deps.timeoutMs ?? 10_000);
  if (!answer.ok) {
    throw new ApiError(
      'REGISTRY_UNAVAILABLE',
      `The EU registry did not accept the registration: ${answer.error}`,
      {
        details: { registry: 'EU_DPP_REGISTRY', registryStatus: answer.status, sent: true, recorded: false },
        headers: { 'Retry-After': '60' },
      },
    );
  }
  const row: EuRegistryRegistrationTable = {
    id: uuidv7(),
    tenant_id: ctx.tenantId,
    product_id: productId,
    version_id: version.id,
    version: version.version,
    digital_link: identifier.digital_link,
    registry_reference: answer.reference,
    registered_at: at,
    actor_type: ctx.actor.type,
    actor_id: ctx.actor.id,
  };
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('eu_registry_registrations').values(row).execute();
      await appendLog(trx, {
        tenantId: ctx.tenantId,
        productId,
        type: 'EU_REGISTRY_REGISTERED',
        data: { version: version.version, versionId: version.id, registryReference: answer.reference },
        correlationId: ctx.correlationId,
        at,
      });
      await recordAudit(trx, {
        tenantId: ctx.tenantId,
        actor: ctx.actor,
        action: 'passport.eu_registry_registered',
        resource: { type: 'passport', id: productId },
        correlationId: ctx.correlationId,
        details: { version: version.version, registryReference: answer.reference },
        at,
      });
    });
  } catch (err) {
    // Two calls at once: the registry saw the same Idempotency-Key twice; the first recorded wins.
    if (!isUniqueViolation(err)) throw err;
    const won = await db
      .selectFrom('eu_registry_registrations')
      .selectAll()
      .where('product_id', '=', productId)
      .where('version_id', '=', version.id)
      .executeTakeFirstOrThrow();
    return { created: false, registration: view(won) };
  }
  return { created: true, registration: view(row) };
}

async function send(
  url: string,
  body: unknown,
  idempotencyKey: string,
  timeoutMs: number,
): Promise<{ ok: true; reference: string | null } | { ok: false; status: number | null; error: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text().catch(() => '');
    if (!res.ok) return { ok: false, status: res.status, error: `it answered ${res.status}` };
    let reference: string | null = null;
    try {
      const parsed = JSON.parse(text) as { registrationId?: unknown };
      if (typeof parsed.registrationId === 'string' && parsed.registrationId.length <= 200)
        reference = parsed.registrationId;
    } catch {
      // An answer without a JSON body: accepted, with no reference of its own.
    }
    return { ok: true, reference };
  } catch (err) {
    return { ok: false, status: null, error: err instanceof Error ? err.message : String(err) };
  }
}
