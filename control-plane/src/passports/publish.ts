/** POST /dpp/{productId}/publish: mints the next immutable version of a generated passport. */
import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/index.js';
import { recordEvent } from '../events/index.js';
import { ApiError, type Actor } from '../http/index.js';
import { getProductForUpdate, markProductPublished } from '../products/index.js';
import { type Db, isUniqueViolation, type PassportVersionTable } from '../store/index.js';
import { contentHash, versionHash } from './chain.js';
import { mergeSections } from './content.js';
import { merkleRoot } from './merkle.js';
import { appendLog, getPassportForUpdate, instantAfter, parseSections, parseTiers } from './queries.js';

export interface PassportWriteContext {
  tenantId: string;
  actor: Actor;
  correlationId: string | null;
  now: () => number;
}

export interface PublishInput {
  amendmentReason: string;
  updates?: Record<string, Record<string, unknown>> | undefined;
  disclosure?: Record<string, string> | undefined;
}

/** Command states in which no new version can be minted (the passport has ended). */
export const UNPUBLISHABLE_STATES = ['archived', 'revoked', 'recycled'] as const;

/** Sections derived from the product and its validations: change those, then generate again. */
export const DERIVED_SECTIONS = ['identifiers', 'credentials'] as const;

/**
 * Mints version N+1 from the working content with `updates` merged by section, chained to version N by
 * id and hash (chain.ts). Does not move the command lifecycle. Marks the product ever-published, emits
 * product.published and logs VERSION_PUBLISHED, in one transaction. Before a generation the passport
 * does not exist: 422 INVALID_STATE_TRANSITION (api-v2.md: publish straight after ready_for_dpp).
 */
export async function publishVersion(
  db: Db,
  ctx: PassportWriteContext,
  productId: string,
  input: PublishInput,
) {
  for (const name of DERIVED_SECTIONS) {
    if (input.updates?.[name] !== undefined) {
      throw ApiError.validation(
        `updates.${name}`,
        `updates.${name}: the ${name} section is derived from the product; change the product and generate again`,
      );
    }
  }
  const run = async (trx: Db) => {
    const product = await getProductForUpdate(trx, ctx.tenantId, productId);
    if (!product) throw ApiError.notFound('Product');
    if (product.voided_at) {
      throw new ApiError('INVALID_STATE_TRANSITION', 'A voided product cannot publish a passport', {
        details: { productId, from: 'voided', to: 'dpp_issued' },
      });
    }
    const passport = await getPassportForUpdate(trx, ctx.tenantId, productId);
    if (!passport) {
      throw new ApiError(
        'INVALID_STATE_TRANSITION',
        `No passport was generated for this product (it is ${product.stage}, not dpp_issued); call POST /api/v2/dpp/generate first`,
        {
          details: {
            productId,
            from: product.stage,
            to: 'dpp_issued',
            required: 'a succeeded POST /api/v2/dpp/generate',
          },
        },
      );
    }
    if ((UNPUBLISHABLE_STATES as readonly string[]).includes(passport.state)) {
      throw new ApiError(
        'INVALID_STATE_TRANSITION',
        `A passport in ${passport.state} cannot publish a new version`,
        {
          details: { productId, from: passport.state, to: 'published', blockedStates: UNPUBLISHABLE_STATES },
        },
      );
    }
    const at = instantAfter(ctx.now(), passport.updated_at);
    const content = mergeSections(parseSections(passport.content), input.updates ?? {});
    const tiers = { ...parseTiers(passport.section_tiers), ...input.disclosure };
    const version: PassportVersionTable = {
      id: randomUUID(),
      tenant_id: ctx.tenantId,
      product_id: productId,
      version: passport.current_version + 1,
      previous_version_id: passport.current_version_id,
      previous_hash: passport.current_hash,
      content: JSON.stringify(content),
      section_tiers: JSON.stringify(tiers),
      content_hash: contentHash(content),
      merkle_root: merkleRoot(content),
      hash: '',
      amendment_reason: input.amendmentReason,
      published_at: at,
      actor_type: ctx.actor.type,
      actor_id: ctx.actor.id,
      correlation_id: ctx.correlationId,
    };
    version.hash = versionHash({
      passportUid: productId,
      version: version.version,
      versionId: version.id,
      previous_version_id: version.previous_version_id,
      previousHash: version.previous_hash,
      contentHash: version.content_hash,
      merkleRoot: version.merkle_root,
      amendmentReason: version.amendment_reason,
      publishedAt: at,
    });
    await trx.insertInto('passport_versions').values(version).execute();
    const res = await trx
      .updateTable('passports')
      .set({
        content: version.content,
        section_tiers: version.section_tiers,
        current_version: version.version,
        current_version_id: version.id,
        current_hash: version.hash,
        first_published_at: passport.first_published_at ?? at,
        updated_at: at,
      })
      .where('product_id', '=', productId)
      .where('current_version', '=', passport.current_version)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.plain(409, 'Another version was published at the same time; retry', {
        details: { reason: 'concurrent_publish' },
      });
    }
    await markProductPublished(trx, ctx.tenantId, productId, at);
    const eventData = {
      productId,
      passportUid: productId,
      versionId: version.id,
      version: version.version,
      previousVersionId: version.previous_version_id,
      hash: version.hash,
      merkleRoot: version.merkle_root,
      amendmentReason: version.amendment_reason,
    };
    await recordEvent(trx, {
      tenantId: ctx.tenantId,
      type: 'product.published',
      resource: { type: 'product', id: productId },
      correlationId: ctx.correlationId,
      occurredAt: at,
      data: eventData,
    });
    await appendLog(trx, {
      tenantId: ctx.tenantId,
      productId,
      type: 'VERSION_PUBLISHED',
      data: eventData,
      correlationId: ctx.correlationId,
      at,
    });
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'passport.version_published',
      resource: { type: 'passport', id: productId },
      correlationId: ctx.correlationId,
      details: {
        version: version.version,
        versionId: version.id,
        updatedSections: Object.keys(input.updates ?? {}),
      },
      at,
    });
    return { version, state: passport.state };
  };
  try {
    return await db.transaction().execute(run);
  } catch (err) {
    // Two publishes racing on SQLite both read N; the unique (product, version) refuses the second.
    if (isUniqueViolation(err)) {
      throw ApiError.plain(409, 'Another version was published at the same time; retry', {
        details: { reason: 'concurrent_publish' },
      });
    }
    throw err;
  }
}
