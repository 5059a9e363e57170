/** Reads of a passport over time: the version chain, as-of projections, proofs and the lifecycle log. */
import { ApiError } from '../http/index.js';
import type { Db, PassportTable, PassportVersionTable } from '../store/index.js';
import { sectionProof } from './merkle.js';
import { publicStatus } from './model.js';
import { getPassport, listVersions, parseSections, productExists } from './queries.js';
import { CHAIN_ALGORITHMS, publicAnswer, versionView } from './views.js';

/** The passport of a product of the tenant: 404 PASSPORT_NOT_FOUND before generation, plain 404 otherwise. */
export async function requirePassport(db: Db, tenantId: string, productId: string): Promise<PassportTable> {
  const passport = await getPassport(db, tenantId, productId);
  if (passport) return passport;
  if (await productExists(db, tenantId, productId)) {
    throw new ApiError(
      'PASSPORT_NOT_FOUND',
      'This product has no passport yet; generate one with POST /api/v2/dpp/generate',
      {
        details: { passportId: productId, reason: 'not_generated' },
      },
    );
  }
  throw ApiError.notFound('Passport');
}

/** GET /passports/{id}/history: every version, oldest first, each with what re-verifies the chain. */
export async function passportHistory(db: Db, tenantId: string, productId: string) {
  const passport = await requirePassport(db, tenantId, productId);
  const versions = await listVersions(db, tenantId, productId);
  return {
    passportUid: productId,
    currentVersion: passport.current_version,
    algorithms: CHAIN_ALGORITHMS,
    versions: versions.map((v) => versionView(v, passport.current_version)),
  };
}

/**
 * GET /passports/{id}/as-of?date=: the passport as it stood at an instant, projected from the version
 * chain, the applied commands and the product's void. 404 PASSPORT_NOT_FOUND only before the first
 * version was published.
 */
export async function passportAsOf(db: Db, tenantId: string, productId: string, instant: Date) {
  const passport = await requirePassport(db, tenantId, productId);
  const at = instant.toISOString();
  const version = await db
    .selectFrom('passport_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .where('published_at', '<=', at)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!version) {
    throw new ApiError('PASSPORT_NOT_FOUND', `No version of this passport was published at ${at}`, {
      details: { asOf: at, firstPublishedAt: passport.first_published_at },
    });
  }
  const commands = await db
    .selectFrom('passport_commands')
    .select(['type', 'to_state', 'payload', 'applied_at'])
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .where('applied_at', '<=', at)
    .orderBy('applied_at')
    .orderBy('id')
    .execute();
  let state = 'draft';
  let disclosureTier = 'public';
  let successorId: string | null = null;
  for (const c of commands) {
    state = c.to_state;
    const payload = JSON.parse(c.payload) as Record<string, unknown>;
    if (c.type === 'PASSPORT.PUBLISH') disclosureTier = payload.disclosureTier as string;
    if (c.type === 'PASSPORT.REVOKE' && typeof payload.successorPassportId === 'string')
      successorId = payload.successorPassportId;
  }
  const product = await db
    .selectFrom('products')
    .select(['voided_at', 'granularity'])
    .where('id', '=', productId)
    .executeTakeFirstOrThrow();
  const voided = product.voided_at !== null && product.voided_at <= at;
  const validations = await db
    .selectFrom('passport_validations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('product_id', '=', productId)
    .where('occurred_at', '<=', at)
    .executeTakeFirstOrThrow();
  const status = publicStatus({
    currentVersion: version.version,
    state,
    disclosureTier,
    productVoided: voided,
    granularity: product.granularity,
  });
  return {
    passportUid: productId,
    asOf: at,
    state,
    disclosureTier,
    productVoided: voided,
    successorId,
    version: { ...versionView(version, passport.current_version), currentAsOf: true },
    publicRoute: publicAnswer(status),
    readyToPrint: Number(validations.n) > 0 && status.kind === 'live',
  };
}

/** The version asked for (current by default), or 404 PASSPORT_NOT_FOUND when none was published. */
async function versionFor(
  db: Db,
  passport: PassportTable,
  version: number | undefined,
): Promise<PassportVersionTable> {
  const wanted = version ?? passport.current_version;
  const row =
    wanted < 1
      ? undefined
      : await db
          .selectFrom('passport_versions')
          .selectAll()
          .where('product_id', '=', passport.product_id)
          .where('version', '=', wanted)
          .executeTakeFirst();
  if (!row) {
    throw new ApiError(
      'PASSPORT_NOT_FOUND',
      version ? `Version ${version} of this passport does not exist` : 'No version was published yet',
      {
        details: { passportId: passport.product_id, version: version ?? null },
      },
    );
  }
  return row;
}

/** GET /passports/{id}/proofs/{section}: the Merkle path of one section of a version. */
export async function sectionProofOf(
  db: Db,
  tenantId: string,
  productId: string,
  section: string,
  version?: number,
) {
  const passport = await requirePassport(db, tenantId, productId);
  const row = await versionFor(db, passport, version);
  const content = parseSections(row.content);
  const proof = sectionProof(content, section);
  if (!proof) {
    throw ApiError.plain(404, `Version ${row.version} has no section ${section}`, {
      details: { sections: Object.keys(content).sort() },
    });
  }
  return {
    passportUid: productId,
    version: row.version,
    versionId: row.id,
    merkleRoot: row.merkle_root,
    algorithm: CHAIN_ALGORITHMS.merkle,
    content: content[section],
    ...proof,
  };
}

/** GET /passports/{id}/lifecycle-log. */
export async function lifecycleLog(db: Db, tenantId: string, productId: string) {
  if (!(await productExists(db, tenantId, productId))) throw ApiError.notFound('Passport');
  const rows = await db
    .selectFrom('passport_log')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('occurred_at')
    .orderBy('id')
    .execute();
  return {
    passportUid: productId,
    entries: rows.map((r) => ({
      id: r.id,
      type: r.type,
      occurredAt: r.occurred_at,
      correlationId: r.correlation_id,
      data: JSON.parse(r.data) as Record<string, unknown>,
    })),
  };
}
