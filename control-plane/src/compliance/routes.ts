/**
 * The compliance routes (api-v2.md, "Compliance"): regulation packs (read with compliance:read, a workspace's
 * own new versions published with compliance:packs), selection of the obligations that apply, and the sector
 * projectors at /products/{id}/compliance/<sector>/full (POST evaluates with compliance:evaluate, GET reads the
 * latest with compliance:read). The battery projector refuses to judge: 503 COMPLIANCE_EVALUATION_UNAVAILABLE.
 */
import { z } from 'zod';
import { ApiError, actorOf, dataEnvelope, route, type RouteDef } from '../http/index.js';
import { getProduct } from '../products/index.js';
import type { Db } from '../store/index.js';
import { STATUSES, evaluationsOf, runEvaluation } from './evaluate.js';
import { LIFECYCLE_STAGES, PRIORITIES, PackVersionSchema } from './pack-format.js';
import { type PackEntry, packCatalogue, publishPackVersion, stateOf, versionsOf } from './packs.js';
import { selectObligations } from './select.js';

export interface ComplianceRouteDeps {
  db: Db;
  now: () => number;
}

const dateOrDateTime = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}(T.+)?$/.test(s) && !Number.isNaN(Date.parse(s)),
    'must be an ISO 8601 date',
  );

const SelectBody = z
  .strictObject({
    context: z.strictObject({
      region: z.string().min(2).max(10),
      productCategory: z.string().min(1).max(64),
      lifecycleStage: z.enum(LIFECYCLE_STAGES, { error: `must be one of ${LIFECYCLE_STAGES.join(', ')}` }),
      effectiveDate: dateOrDateTime,
    }),
    minimumPriorityLevel: z.enum(PRIORITIES, { error: `must be one of ${PRIORITIES.join(', ')}` }),
  })
  .meta({ id: 'ComplianceSelectionRequest' });

const EvaluateBody = z
  .strictObject({
    lifecycleStage: z.enum(LIFECYCLE_STAGES).default('placing_on_market'),
    effectiveDate: dateOrDateTime.optional().meta({ description: 'The date judged; now when omitted' }),
  })
  .meta({ id: 'ComplianceEvaluationRequest' });

const PublishPackBody = PackVersionSchema.extend({
  effectiveFrom: PackVersionSchema.shape.effectiveFrom
    .optional()
    .meta({ description: 'When it takes effect; now when omitted. Until then it is a draft' }),
}).meta({ id: 'RegulationPackPublication' });

const Loose = z.record(z.string(), z.unknown());
const FindingSchema = z
  .object({
    obligationId: z.string(),
    celex: z.string(),
    packVersion: z.string(),
    article: z.string(),
    title: z.string(),
    priority: z.enum(PRIORITIES),
    outcome: z.enum(['pass', 'fail', 'indeterminate', 'not_evaluated', 'error']),
    reason: z.string().nullable(),
    missing: z.array(z.string()),
    observed: Loose,
  })
  .meta({ id: 'ComplianceFinding' });
const PackRefSchema = z.object({
  celex: z.string(),
  version: z.string(),
  title: z.string(),
  source: z.enum(['shipped', 'workspace']),
});
const EvaluationSchema = z
  .object({
    evaluationId: z.uuid(),
    productId: z.uuid(),
    sector: z.string(),
    status: z.enum(STATUSES),
    score: z.number().int().nullable().meta({ description: '0 to 100; null when the status is Unknown' }),
    context: Loose,
    packs: z.array(PackRefSchema),
    findings: z.array(FindingSchema),
    evaluatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ComplianceEvaluation' });
const PackSummarySchema = PackRefSchema.extend({
  effectiveFrom: z.iso.datetime({ offset: true }),
  state: z.enum(['draft', 'effective', 'superseded']),
  sector: z.string(),
  obligations: z.number().int(),
  publishedAt: z.iso.datetime().nullable(),
}).meta({ id: 'RegulationPackVersion' });

const CelexParam = z.object({ celex: z.string().min(1).max(20) });
const VersionParams = z.object({ celex: z.string().min(1).max(20), version: z.string().min(1).max(20) });
const ProductParams = z.object({ id: z.uuid(), sector: z.string().min(1).max(32) });
const ProductParam = z.object({ id: z.uuid() });

export function complianceRoutes(deps: ComplianceRouteDeps): RouteDef[] {
  const { db } = deps;
  const read = { scopes: ['compliance:read'] };
  const summary = (all: readonly PackEntry[], e: PackEntry) => ({
    celex: e.pack.celex,
    version: e.pack.version,
    title: e.pack.title,
    source: e.source,
    effectiveFrom: e.pack.effectiveFrom,
    state: stateOf(all, e, deps.now()),
    sector: e.pack.sector,
    obligations: e.pack.obligations.length,
    publishedAt: e.publishedAt,
  });
  const packNotFound = (celex: string, version?: string) =>
    ApiError.plain(404, version ? `No version ${version} of pack ${celex}` : `No regulation pack ${celex}`);
  /** The product and its sector's packs, or 404 (another workspace's product is not found either). */
  const productFor = async (tenantId: string, id: string, sector: string) => {
    const product = await getProduct(db, tenantId, id);
    if (!product) throw ApiError.notFound('Product');
    const catalogue = await packCatalogue(db, tenantId);
    const packs = catalogue.filter((e) => e.pack.sector === sector);
    if (packs.length === 0) throw ApiError.plain(404, `No sector projector ${sector}`);
    if (packs.some((e) => e.pack.judgement === 'refuse')) {
      throw new ApiError(
        'COMPLIANCE_EVALUATION_UNAVAILABLE',
        `The ${sector} projector refuses to judge: its evaluation is not available, which is not a compliance failure`,
        { details: { sector, productId: id, celex: [...new Set(packs.map((e) => e.pack.celex))] } },
      );
    }
    return { product, catalogue };
  };

  return [
    route({
      method: 'get',
      path: '/api/v2/compliance/packs',
      operationId: 'listRegulationPacks',
      summary: 'Every regulation pack version the workspace sees, newest first per pack',
      description:
        'Scope compliance:read. The versions the service ships and those the workspace published, each with its state now ' +
        '(draft until its effectiveFrom, effective, or superseded by a later one; superseded versions stay readable).',
      tags: ['Compliance'],
      auth: read,
      responses: { 200: { description: 'Pack versions', schema: dataEnvelope(z.array(PackSummarySchema)) } },
      handler: async ({ principal }) => {
        const all = await packCatalogue(db, principal.tenant.id);
        const celexes = [...new Set(all.map((e) => e.pack.celex))].sort();
        return {
          status: 200,
          body: { data: celexes.flatMap((c) => versionsOf(all, c).map((e) => summary(all, e))) },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/compliance/packs/{celex}/versions',
      operationId: 'listRegulationPackVersions',
      summary: 'The versions of one regulation pack, newest first, with their states',
      description: 'Scope compliance:read. 404 for a CELEX id the workspace has no pack for.',
      tags: ['Compliance'],
      auth: read,
      request: { params: CelexParam },
      responses: { 200: { description: 'Its versions', schema: dataEnvelope(z.array(PackSummarySchema)) } },
      handler: async ({ principal, params }) => {
        const all = await packCatalogue(db, principal.tenant.id);
        const versions = versionsOf(all, params.celex);
        if (versions.length === 0) throw packNotFound(params.celex);
        return { status: 200, body: { data: versions.map((e) => summary(all, e)) } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/compliance/packs/{celex}/versions/{version}',
      operationId: 'getRegulationPackVersion',
      summary: 'One regulation pack version, whole: its obligations and their rules',
      tags: ['Compliance'],
      auth: read,
      request: { params: VersionParams },
      responses: { 200: { description: 'The pack version', schema: dataEnvelope(Loose) } },
      handler: async ({ principal, params }) => {
        const all = await packCatalogue(db, principal.tenant.id);
        const e = versionsOf(all, params.celex).find((x) => x.pack.version === params.version);
        if (!e) throw packNotFound(params.celex, params.version);
        return { status: 200, body: { data: { ...summary(all, e), pack: e.pack } } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/compliance/packs/{celex}/versions',
      operationId: 'publishRegulationPackVersion',
      summary: "Publish a new version of a regulation pack for the workspace's own evaluations",
      description:
        'Scope compliance:packs (give it to the workspace admins who keep the rules). The body is a whole pack version ' +
        '(the format of the shipped packs; see the compliance README). It supersedes the effective version from its ' +
        'effectiveFrom (now when omitted; a date ahead makes it a draft until then) for this workspace only; nothing is ' +
        'edited in place. 409 INVALID_TRANSITION for a version not higher than every one seen, or one taking effect before ' +
        'the effective version; 400 VALIDATION_ERROR names the field of a malformed pack.',
      tags: ['Compliance'],
      auth: { scopes: ['compliance:packs'] },
      idempotency: 'recommended',
      request: { params: CelexParam, body: PublishPackBody },
      responses: { 201: { description: 'Published', schema: dataEnvelope(PackSummarySchema) } },
      errors: ['VALIDATION_ERROR', 'INVALID_TRANSITION'],
      handler: async ({ principal, params, body, correlationId }) => {
        if (body.celex !== params.celex)
          throw ApiError.validation('celex', 'celex: must be the pack of the path');
        const pack = { ...body, effectiveFrom: body.effectiveFrom ?? new Date(deps.now()).toISOString() };
        const e = await publishPackVersion(
          db,
          { tenantId: principal.tenant.id, actor: actorOf(principal), correlationId, now: deps.now },
          pack,
        );
        const all = await packCatalogue(db, principal.tenant.id);
        return { status: 201, body: { data: summary(all, e) } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/compliance/regulations/select',
      operationId: 'selectRegulations',
      summary: 'The obligations that apply to a context at a date, at or above a priority',
      description:
        'Scope compliance:read. From the pack versions effective at context.effectiveDate (point in time: a date before a ' +
        'new version selects from the one effective then), the obligations whose region, category, lifecycle stage and ' +
        'window match, at or above minimumPriorityLevel (HIGH, MEDIUM, LOW), HIGH first. Changes nothing.',
      tags: ['Compliance'],
      auth: read,
      request: { body: SelectBody },
      responses: {
        200: {
          description: 'The packs consulted and the obligations that apply',
          schema: dataEnvelope(z.object({ packs: z.array(PackRefSchema), obligations: z.array(Loose) })),
        },
      },
      errors: ['VALIDATION_ERROR'],
      handler: async ({ principal, body }) => {
        const all = await packCatalogue(db, principal.tenant.id);
        const effectiveDate = new Date(body.context.effectiveDate).toISOString();
        const selection = selectObligations(
          all,
          { ...body.context, effectiveDate },
          body.minimumPriorityLevel,
        );
        return { status: 200, body: { data: selection } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/products/{id}/compliance/{sector}/full',
      operationId: 'evaluateCompliance',
      summary: "Run a sector projector's evaluation of a product (espr; battery refuses)",
      description:
        'Scope compliance:evaluate. Every obligation of the sector pack version effective at the date is run against the ' +
        'product as it is now and recorded: score (0-100, weighted by priority; null when Unknown), status ' +
        '(FullyCompliant, PartiallyCompliant, NonCompliant, Indeterminate while data is missing, Unknown when a rule or ' +
        'the data failed) and findings, one per obligation (pass, fail, indeterminate with the missing data, not_evaluated ' +
        'with why, error), naming the pack versions used. Fails closed: never FullyCompliant without every applicable ' +
        'obligation passed. Changes nothing else. battery: 503 COMPLIANCE_EVALUATION_UNAVAILABLE.',
      tags: ['Compliance'],
      auth: { scopes: ['compliance:evaluate'] },
      idempotency: 'recommended',
      request: { params: ProductParams, body: EvaluateBody },
      responses: { 201: { description: 'The evaluation, recorded', schema: dataEnvelope(EvaluationSchema) } },
      errors: ['COMPLIANCE_EVALUATION_UNAVAILABLE', 'VALIDATION_ERROR'],
      handler: async ({ principal, params, body }) => {
        const { product, catalogue } = await productFor(principal.tenant.id, params.id, params.sector);
        const evaluation = await runEvaluation(
          db,
          { tenantId: principal.tenant.id, actor: actorOf(principal), now: deps.now },
          {
            sector: params.sector,
            product,
            catalogue,
            lifecycleStage: body.lifecycleStage,
            effectiveDate: new Date(body.effectiveDate ?? deps.now()).toISOString(),
          },
        );
        return { status: 201, body: { data: evaluation } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/products/{id}/compliance/{sector}/full',
      operationId: 'getLatestComplianceEvaluation',
      summary: 'The latest recorded evaluation of a product by a sector projector',
      description:
        'Scope compliance:read. 404 with no code when none was run yet (run one with POST); battery: 503 ' +
        'COMPLIANCE_EVALUATION_UNAVAILABLE.',
      tags: ['Compliance'],
      auth: read,
      request: { params: ProductParams },
      responses: { 200: { description: 'The latest evaluation', schema: dataEnvelope(EvaluationSchema) } },
      errors: ['COMPLIANCE_EVALUATION_UNAVAILABLE'],
      handler: async ({ principal, params }) => {
        await productFor(principal.tenant.id, params.id, params.sector);
        const [latest] = await evaluationsOf(db, principal.tenant.id, params.id, params.sector);
        if (!latest) throw ApiError.plain(404, 'No evaluation was run for this product and sector yet');
        return { status: 200, body: { data: latest } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/products/{id}/compliance/evaluations',
      operationId: 'listComplianceEvaluations',
      summary: 'The recorded evaluations of a product, newest first (the last 100)',
      tags: ['Compliance'],
      auth: read,
      request: { params: ProductParam },
      responses: { 200: { description: 'Newest first', schema: dataEnvelope(z.array(EvaluationSchema)) } },
      handler: async ({ principal, params }) => {
        const product = await getProduct(db, principal.tenant.id, params.id);
        if (!product) throw ApiError.notFound('Product');
        return { status: 200, body: { data: await evaluationsOf(db, principal.tenant.id, params.id) } };
      },
    }),
  ];
}
