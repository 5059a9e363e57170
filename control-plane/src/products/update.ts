import { sameCanonicalJson } from '@dpp/shared';
import { recordEvent } from '../events/index.js';
import { ApiError } from '../http/index.js';
import { canonicalCategory, canonicalJurisdiction } from '../schemas/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { insertVersions } from './history.js';
import { CUSTOM_DATA_MAX_BYTES, type ProductUpdateInput } from './input.js';
import { nameKey, toProductView, type ProductView } from './model.js';
import { isUniqueViolation } from '../store/index.js';
import { findHolder, getProductForUpdate } from './queries.js';
import { checkExtensions, effectiveSchema, type WriteContext } from './rules.js';

/** API fields a PATCH/PUT can change, in the order changedFields lists them. */
const WRITABLE_VIEW_FIELDS = [
  'productName',
  'productDescription',
  'category',
  'jurisdiction',
  'schemaId',
  'schemaVersion',
  'gtin',
  'serialNumber',
  'granularity',
  'companyPrefixLength',
  'epcScheme',
  'extensions',
  'customData',
] as const satisfies readonly (keyof ProductView)[];

/**
 * Fields whose change on an ever-published product needs an eIDAS actor identity (api-v2.md, Errors:
 * EIDAS_ACTOR_BINDING_UNAVAILABLE); only production enforces it, development and test proceed.
 */
const EIDAS_BOUND_FIELDS = ['category', 'gtin', 'customData'];

/** RFC 7396 JSON merge patch of a flat object: a null member removes the key. */
export function mergePatch(
  target: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function rejectVoided(row: ProductTable): void {
  if (row.voided_at) {
    throw ApiError.plain(409, 'The product is voided; a voided product cannot change', {
      details: { reason: 'product_voided', voidedAt: row.voided_at },
    });
  }
}

function applyExtensions(
  ctx: WriteContext,
  row: ProductTable,
  next: ProductTable,
  patch: ProductUpdateInput,
): void {
  const categoryChanged = next.category !== row.category;
  if (!categoryChanged && next.jurisdiction === row.jurisdiction && patch.extensions === undefined) return;
  const schema = effectiveSchema(ctx, next.category, next.jurisdiction);
  if (schema instanceof ApiError) throw schema;
  // A new category has other fields: its extensions come whole, never merged with the old ones.
  const base = categoryChanged ? {} : (JSON.parse(row.extensions) as Record<string, unknown>);
  const merged = patch.extensions === null ? null : mergePatch(base, patch.extensions ?? {});
  const checked = checkExtensions(schema, merged);
  if (checked instanceof ApiError) throw checked;
  next.extensions = JSON.stringify(checked);
  next.schema_id = schema.schemaId;
  next.schema_version = schema.version;
}

function applyCustomData(row: ProductTable, next: ProductTable, patch: ProductUpdateInput): void {
  if (patch.customData === undefined) return;
  if (patch.customData === null) {
    next.custom_data = null;
    return;
  }
  const current = row.custom_data ? (JSON.parse(row.custom_data) as Record<string, unknown>) : {};
  const merged = mergePatch(current, patch.customData);
  const json = JSON.stringify(merged);
  if (json.length > CUSTOM_DATA_MAX_BYTES) {
    throw ApiError.validation(
      'customData',
      `customData: must be at most ${CUSTOM_DATA_MAX_BYTES} bytes as JSON`,
    );
  }
  next.custom_data = Object.keys(merged).length > 0 ? json : null;
}

/** The row after the patch, before versioning; throws the typed error of the first rule broken. */
function applyPatch(ctx: WriteContext, row: ProductTable, patch: ProductUpdateInput): ProductTable {
  const next: ProductTable = { ...row };
  if (patch.name !== undefined) {
    next.name = patch.name;
    next.name_key = nameKey(patch.name);
  }
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.category !== undefined) next.category = canonicalCategory(patch.category);
  if (patch.jurisdiction !== undefined) next.jurisdiction = canonicalJurisdiction(patch.jurisdiction);
  if (patch.gtin !== undefined) next.gtin = patch.gtin;
  if (patch.serialNumber !== undefined) next.serial_number = patch.serialNumber;
  if (patch.granularity !== undefined) next.granularity = patch.granularity;
  if (patch.companyPrefixLength !== undefined) next.company_prefix_length = patch.companyPrefixLength;
  if (patch.epcScheme !== undefined) next.epc_scheme = patch.epcScheme;
  applyExtensions(ctx, row, next, patch);
  applyCustomData(row, next, patch);
  return next;
}

function duplicate(next: ProductTable, holder: string | undefined): ApiError {
  return next.granularity === 'model'
    ? new ApiError('DUPLICATE_GTIN', `GTIN ${next.gtin} is already used by a model-granularity product`, {
        details: { gtin: next.gtin, ...(holder ? { productId: holder } : {}) },
      })
    : new ApiError(
        'DUPLICATE_SERIAL',
        `GTIN ${next.gtin} with serialNumber ${next.serial_number} already exists`,
        {
          details: {
            gtin: next.gtin,
            serialNumber: next.serial_number,
            ...(holder ? { productId: holder } : {}),
          },
        },
      );
}

/**
 * PATCH and PUT /products/{id} (one handler; PUT is the alias). Applies the patch, validates the result
 * under the create rules, and when anything changed writes version N+1 and product.updated in one
 * transaction. A patch that changes nothing answers the product as it is, without a new version.
 */
/**
 * 409 PUBLISHED_PASSPORT_RETAINED: a passport of the product was published, so it is retained for the product's
 * life and neither changed nor archived through the /dpps routes.
 */
export function publishedPassportRetained(dppId: string, firstPublishedAt: string): ApiError {
  return new ApiError(
    'PUBLISHED_PASSPORT_RETAINED',
    'This passport was published: it is retained for the life of the product and cannot be changed or archived here',
    { details: { dppId, firstPublishedAt } },
  );
}

/**
 * `unpublishedOnly` (PATCH /dpps/{dppId}): refuse a product whose passport was ever published, decided under the
 * product's row lock, which publishing takes too, so a publish in between cannot slip through.
 */
export async function updateProduct(
  db: Db,
  ctx: WriteContext,
  id: string,
  patch: ProductUpdateInput,
  opts: { unpublishedOnly?: boolean } = {},
): Promise<ProductView> {
  return db.transaction().execute(async (trx) => {
    const row = await getProductForUpdate(trx, ctx.tenantId, id);
    if (!row) throw ApiError.notFound('Product');
    if (opts.unpublishedOnly && row.published_at !== null)
      throw publishedPassportRetained(id, row.published_at);
    rejectVoided(row);
    const next = applyPatch(ctx, row, patch);
    const before = toProductView(row);
    const candidate = toProductView(next);
    const changed = WRITABLE_VIEW_FIELDS.filter((f) => !sameCanonicalJson(before[f], candidate[f]));
    if (changed.length === 0) return before;

    const bound = changed.filter((f) => EIDAS_BOUND_FIELDS.includes(f));
    if (row.published_at && ctx.env === 'production' && bound.length > 0) {
      throw new ApiError(
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        'Changing category, gtin or customData of a product with a published passport needs an eIDAS actor identity, which cannot be bound yet',
        { details: { fields: bound } },
      );
    }
    if (changed.some((f) => f === 'gtin' || f === 'serialNumber' || f === 'granularity')) {
      const holder = await findHolder(trx, next, id);
      if (holder) throw duplicate(next, holder);
    }

    const at = new Date(ctx.now()).toISOString();
    next.version = row.version + 1;
    next.updated_at = at;
    const { id: _id, tenant_id: _t, created_at: _c, ...values } = next;
    try {
      const res = await trx
        .updateTable('products')
        .set(values)
        .where('tenant_id', '=', ctx.tenantId)
        .where('id', '=', id)
        .where('version', '=', row.version)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) {
        throw ApiError.plain(409, 'The product changed while this update ran; retry', {
          details: { reason: 'concurrent_update' },
        });
      }
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(next, undefined);
      throw err;
    }
    const product = toProductView(next);
    await insertVersions(trx, [
      {
        tenantId: ctx.tenantId,
        product,
        change: 'updated',
        changedFields: changed,
        actor: ctx.actor,
        correlationId: ctx.correlationId,
        at,
      },
    ]);
    await recordEvent(trx, {
      tenantId: ctx.tenantId,
      type: 'product.updated',
      resource: { type: 'product', id },
      correlationId: ctx.correlationId,
      occurredAt: at,
      data: { productId: id, version: product.version, changes: changed, status: product.status },
    });
    return product;
  });
}
