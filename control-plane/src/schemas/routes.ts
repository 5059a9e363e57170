import { Readable } from 'node:stream';
import { z } from 'zod';
import { route, type RouteDef, ErrorEnvelopeSchema, dataEnvelope, queryBoolean } from '../http/index.js';
import type { CategorySchemaVersion } from './define.js';
import { renderImportTemplate } from './import-template.js';
import {
  DEFAULT_JURISDICTION,
  canonicalJurisdiction,
  isEffectiveAt,
  type SchemaRegistry,
} from './registry.js';

const Jurisdiction = z
  .string()
  .regex(/^[A-Za-z]{2,8}$/, 'must be a jurisdiction code such as EU')
  .meta({ description: `Jurisdiction code, case-insensitive; ${DEFAULT_JURISDICTION} when omitted` });

/** `date`: an ISO 8601 date or date-time; a date means its start (00:00 UTC). */
const PointInTime = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: 'must be an ISO 8601 date or date-time' })
  .transform((v) => Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v))
  .meta({ description: 'The instant the schema must be effective at (ISO 8601); now when omitted' });

const CategoryParam = z.object({
  category: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a category name such as electronics'),
});

const VersionSummary = z.object({
  schemaId: z.string(),
  version: z.string(),
  effectiveFrom: z.iso.datetime(),
  effectiveUntil: z.iso.datetime().nullable(),
  effectiveNow: z.boolean(),
});

const Links = z.object({
  self: z.string(),
  importTemplate: z
    .string()
    .meta({ description: 'Path of the CSV import template, with the jurisdiction query' }),
});

const CategorySummarySchema = z
  .object({
    category: z.string(),
    title: z.string(),
    jurisdiction: z.string(),
    schemaRegistryId: z.string(),
    currentVersion: z.string().nullable().meta({ description: 'The version effective now, if any' }),
    effectiveFrom: z.iso.datetime().meta({ description: 'Start of the earliest version' }),
    effectiveUntil: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'End of the latest version; null when open' }),
    effectiveNow: z.boolean(),
    versions: z.array(VersionSummary),
    _links: Links,
  })
  .meta({ id: 'CategorySchemaSummary' });

const CategorySchemaRecord = z
  .object({
    category: z.string(),
    title: z.string(),
    jurisdiction: z.string(),
    schemaId: z.string(),
    schemaRegistryId: z.string(),
    version: z.string(),
    effectiveFrom: z.iso.datetime(),
    effectiveUntil: z.iso.datetime().nullable().meta({ description: 'null when open-ended' }),
    effectiveNow: z.boolean(),
    legalBasis: z.array(z.string()),
    requiredFields: z.array(z.string()),
    fieldSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'JSON Schema (2020-12) of the extensions; omitted when includeFields=false' }),
    _links: Links,
  })
  .meta({ id: 'CategorySchema' });

const links = (category: string, jurisdiction: string) => ({
  self: `/api/v2/schemas/categories/${category}?jurisdiction=${jurisdiction}`,
  importTemplate: `/api/v2/schemas/categories/${category}/import-template?jurisdiction=${jurisdiction}`,
});

function summaries(
  versions: readonly CategorySchemaVersion[],
  now: number,
): z.infer<typeof CategorySummarySchema>[] {
  const groups = new Map<string, CategorySchemaVersion[]>();
  for (const v of versions) {
    const key = `${v.category}\u0000${v.jurisdiction}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return [...groups.values()].map((vs) => {
    const first = vs[0]!;
    const last = vs[vs.length - 1]!;
    const current = vs.find((v) => isEffectiveAt(v, now));
    return {
      category: first.category,
      title: first.title,
      jurisdiction: first.jurisdiction,
      schemaRegistryId: first.schemaRegistryId,
      currentVersion: current?.version ?? null,
      effectiveFrom: first.effectiveFrom,
      effectiveUntil: last.effectiveUntil,
      effectiveNow: current !== undefined,
      versions: vs.map((v) => ({
        schemaId: v.schemaId,
        version: v.version,
        effectiveFrom: v.effectiveFrom,
        effectiveUntil: v.effectiveUntil,
        effectiveNow: isEffectiveAt(v, now),
      })),
      _links: links(first.category, first.jurisdiction),
    };
  });
}

/** The category schema record (api-v2.md, Resources: Category schema record). */
export function schemaRecord(v: CategorySchemaVersion, includeFields: boolean, now: number) {
  return {
    category: v.category,
    title: v.title,
    jurisdiction: v.jurisdiction,
    schemaId: v.schemaId,
    schemaRegistryId: v.schemaRegistryId,
    version: v.version,
    effectiveFrom: v.effectiveFrom,
    effectiveUntil: v.effectiveUntil,
    effectiveNow: isEffectiveAt(v, now),
    legalBasis: [...v.legalBasis],
    requiredFields: [...v.fieldSchema.required],
    ...(includeFields ? { fieldSchema: v.fieldSchema } : {}),
    _links: links(v.category, v.jurisdiction),
  };
}

const read = { scopes: ['products:read'] } as const;
const notFound = {
  description:
    'SCHEMA_NOT_FOUND: no version of the category is effective at that instant in that jurisdiction; ' +
    'details.availableCategories lists those that are',
  schema: ErrorEnvelopeSchema,
};

/** The schema registry routes (api-v2.md, Products: schema routes). All readable with a read-only key. */
export function schemaRoutes(deps: { registry: SchemaRegistry; now: () => number }): RouteDef[] {
  const { registry, now } = deps;
  return [
    route({
      method: 'get',
      path: '/api/v2/schemas/categories',
      operationId: 'listCategorySchemas',
      summary: 'Every category with its schema versions, jurisdiction, effective window and effectiveNow',
      tags: ['Schemas'],
      auth: read,
      request: { query: z.object({ jurisdiction: Jurisdiction.optional() }).strict() },
      responses: {
        200: {
          description: 'One entry per category and jurisdiction',
          schema: dataEnvelope(z.array(CategorySummarySchema)),
        },
      },
      handler: async ({ query }) => ({
        status: 200,
        body: { data: summaries(registry.all(query.jurisdiction), now()) },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/schemas/categories/{category}',
      operationId: 'getCategorySchema',
      summary: 'The schema of a category effective at an instant (point-in-time selection)',
      description:
        'Selects the version with effectiveFrom <= date < effectiveUntil in the jurisdiction. ' +
        'A miss is 404 SCHEMA_NOT_FOUND with details.availableCategories.',
      tags: ['Schemas'],
      auth: read,
      request: {
        params: CategoryParam,
        query: z
          .object({
            jurisdiction: Jurisdiction.optional(),
            date: PointInTime.optional(),
            includeFields: queryBoolean
              .optional()
              .meta({ description: 'false omits fieldSchema; true by default' }),
          })
          .strict(),
      },
      responses: {
        200: { description: 'The category schema record', schema: dataEnvelope(CategorySchemaRecord) },
        404: notFound,
      },
      handler: async ({ params, query }) => {
        const selector = { jurisdiction: query.jurisdiction, at: query.date ?? now() };
        const v = registry.resolve(params.category, selector);
        if (!v) throw registry.notFound(params.category, selector, 404);
        return { status: 200, body: { data: schemaRecord(v, query.includeFields ?? true, now()) } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/schemas/categories/{category}/import-template',
      operationId: 'getCategoryImportTemplate',
      summary: 'The CSV import template of a category, rendered from the schema effective now',
      description:
        'RFC 4180 CSV with one header line: the product columns (name, description, category, gtin, ' +
        'serialNumber, jurisdiction, granularity, companyPrefixLength) and then every extension field of the ' +
        'effective schema, in schema order. POST /api/v2/ingest/products accepts files with these columns.',
      tags: ['Schemas'],
      auth: read,
      request: { params: CategoryParam, query: z.object({ jurisdiction: Jurisdiction.optional() }).strict() },
      responses: {
        200: { description: 'The template (text/csv)', contentType: 'text/csv' },
        404: notFound,
      },
      handler: async ({ params, query }) => {
        const selector = { jurisdiction: query.jurisdiction, at: now() };
        const v = registry.resolve(params.category, selector);
        if (!v) throw registry.notFound(params.category, selector, 404);
        const j = canonicalJurisdiction(v.jurisdiction);
        return {
          status: 200,
          contentType: 'text/csv; charset=utf-8',
          stream: Readable.from([renderImportTemplate(v)]),
          headers: {
            'Content-Disposition': `attachment; filename="${v.category}-${j}-${v.version}-import-template.csv"`,
            'X-Schema-Id': v.schemaId,
          },
        };
      },
    }),
  ];
}
