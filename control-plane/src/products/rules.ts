import type { Environment } from '../config/index.js';
import { ApiError, type Actor } from '../http/index.js';
import {
  DEFAULT_JURISDICTION,
  canonicalCategory,
  canonicalJurisdiction,
  validateFields,
  withoutNulls,
  type CategorySchemaVersion,
  type SchemaRegistry,
} from '../schemas/index.js';
import type { ProductTable } from '../store/index.js';
import { ProductCreateSchema, parseItem, type ProductCreateInput } from './input.js';
import { timeOrderedUuid } from './ids.js';
import { DEFAULT_COMPANY_PREFIX_LENGTH, nameKey } from './model.js';

/** Who writes and under which rules: one per request (or per ingest job). */
export interface WriteContext {
  tenantId: string;
  actor: Actor;
  correlationId: string | null;
  env: Environment;
  registry: SchemaRegistry;
  now: () => number;
}

export type Prepared = { ok: true; row: ProductTable } | { ok: false; error: ApiError };

/** The effective schema of a category, or 422 SCHEMA_NOT_FOUND listing the available categories. */
export function effectiveSchema(
  ctx: WriteContext,
  category: string,
  jurisdiction: string,
): CategorySchemaVersion | ApiError {
  const selector = { jurisdiction, at: ctx.now() };
  return ctx.registry.resolve(category, selector) ?? ctx.registry.notFound(category, selector, 422);
}

/**
 * Checks extensions against a schema: absent (or empty while the schema requires fields) is 422
 * EXTENSIONS_REQUIRED; a field outside its bounds is 400 VALIDATION_ERROR naming `extensions.<field>`
 * and the bound (`details.keyword`, `details.limit`). Returns the extensions without null members.
 */
export function checkExtensions(
  schema: CategorySchemaVersion,
  extensions: Record<string, unknown> | null | undefined,
): Record<string, unknown> | ApiError {
  const required = schema.fieldSchema.required;
  const present = extensions ? withoutNulls(extensions) : undefined;
  if (!present || (Object.keys(present).length === 0 && required.length > 0)) {
    return new ApiError('EXTENSIONS_REQUIRED', `extensions are required for category ${schema.category}`, {
      details: { category: schema.category, schemaId: schema.schemaId, requiredFields: [...required] },
    });
  }
  const problems = validateFields(schema.fieldSchema, present);
  if (problems.length === 0) return present;
  const issues = problems.map((p) => ({
    field: `extensions.${p.field}`,
    message: p.message,
    keyword: p.keyword,
    ...(p.limit !== undefined ? { limit: p.limit } : {}),
  }));
  const first = issues[0]!;
  return ApiError.validation(first.field, `${first.field}: ${first.message}`, {
    keyword: first.keyword,
    ...(first.limit !== undefined ? { limit: first.limit } : {}),
    schemaId: schema.schemaId,
    schemaVersion: schema.version,
    issues,
  });
}

/** Applies every create rule after parsing: schema resolution, extensions, defaults. */
export function prepareProduct(input: ProductCreateInput, ctx: WriteContext): Prepared {
  const jurisdiction = canonicalJurisdiction(input.jurisdiction ?? DEFAULT_JURISDICTION);
  const category = canonicalCategory(input.category);
  const schema = effectiveSchema(ctx, category, jurisdiction);
  if (schema instanceof ApiError) return { ok: false, error: schema };
  const extensions = checkExtensions(schema, input.extensions);
  if (extensions instanceof ApiError) return { ok: false, error: extensions };
  const at = new Date(ctx.now()).toISOString();
  return {
    ok: true,
    row: {
      id: timeOrderedUuid(ctx.now()),
      tenant_id: ctx.tenantId,
      name: input.name,
      name_key: nameKey(input.name),
      description: input.description,
      category,
      jurisdiction,
      schema_id: schema.schemaId,
      schema_version: schema.version,
      gtin: input.gtin,
      serial_number: input.serialNumber,
      granularity: input.granularity ?? 'model',
      company_prefix_length: input.companyPrefixLength ?? DEFAULT_COMPANY_PREFIX_LENGTH,
      epc_scheme: input.epcScheme ?? 'auto',
      extensions: JSON.stringify(extensions),
      custom_data: input.customData ? JSON.stringify(input.customData) : null,
      stage: 'draft',
      version: 1,
      voided_at: null,
      void_reason: null,
      published_at: null,
      print_loop_at: null,
      ingest_job_id: null,
      ingest_row: null,
      created_at: at,
      updated_at: at,
    },
  };
}

/** Parses a raw item (a batch item, an ingest row) and applies the create rules: the one create contract. */
export function prepareCreate(raw: unknown, ctx: WriteContext): Prepared {
  const parsed = parseItem(ProductCreateSchema, raw);
  if (!parsed.ok) return parsed;
  return prepareProduct(parsed.value, ctx);
}
