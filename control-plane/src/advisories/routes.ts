/**
 * The advisory routes: the workspace's own (scope advisories:manage: publish, list, read, update, withdraw)
 * and its public feed under the company slug (no credential, CORS, 60 requests a minute per client IP).
 * The feed fails closed: whatever keeps it from being served whole answers 503
 * SECURITY_ADVISORY_FEED_UNAVAILABLE, never a partial list; an unknown slug is 404 COMPANY_NOT_FOUND.
 */
import { z } from 'zod';
import {
  ApiError,
  CursorQuery,
  LimitQuery,
  actorOf,
  dataEnvelope,
  pageEnvelope,
  publicRoute,
  route,
  type Principal,
  type RouteDef,
} from '../http/index.js';
import type { Db } from '../store/index.js';
import { slugOf } from '../tenants/index.js';
import {
  advisoryByTrackingId,
  allAdvisories,
  getAdvisory,
  listAdvisories,
  publishAdvisory,
  updateAdvisory,
  withdrawAdvisory,
  type Advisory,
} from './advisories.js';
import { type Publisher, csafDocument, documentUrl, rolieFeed } from './csaf.js';
import { AdvisoryChanges, AdvisoryInput, AdvisorySchema, WithdrawBody } from './schemas.js';

export interface AdvisoryRouteDeps {
  db: Db;
  publicBaseUrl: string;
  now: () => number;
}

const IdParam = z.object({ advisoryId: z.uuid() });
const PageQuery = z.object({ limit: LimitQuery, cursor: CursorQuery }).strict();
const SlugParam = z.object({ slug: z.string().min(1).max(100) });
const DocParams = z.object({ slug: z.string().min(1).max(100), trackingId: z.string().min(1).max(200) });
const Loose = z.record(z.string(), z.unknown());

const FEED_HEADERS = { 'Cache-Control': 'no-cache' };

export function advisoryRoutes(deps: AdvisoryRouteDeps): RouteDef[] {
  const { db, publicBaseUrl } = deps;
  const auth = { scopes: ['advisories:manage'] };
  const context = (principal: Principal, correlationId: string) => ({
    tenantId: principal.tenant.id,
    actor: actorOf(principal),
    correlationId,
    now: deps.now,
  });
  const view = (a: Advisory, slug: string) => ({
    ...a,
    csafUrl: documentUrl(publicBaseUrl, slug, a.trackingId),
  });
  const one = { description: 'The advisory', schema: dataEnvelope(AdvisorySchema) };

  /** Serves the feed or one document whole, or not at all. */
  const failClosed = async <T>(slug: string, serve: (p: Publisher, tenantId: string) => Promise<T>) => {
    let tenant: { id: string; name: string; slug: string | null } | undefined;
    try {
      tenant = await db
        .selectFrom('tenants')
        .select(['id', 'name', 'slug'])
        .where('slug', '=', slug.toLowerCase())
        .executeTakeFirst();
    } catch (err) {
      throw unavailable(err);
    }
    if (!tenant)
      throw new ApiError('COMPANY_NOT_FOUND', 'No company goes by this slug', { details: { slug } });
    try {
      return await serve({ name: tenant.name, slug: tenant.slug ?? slug }, tenant.id);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'ADVISORY_NOT_FOUND') throw err;
      throw unavailable(err);
    }
  };

  return [
    route({
      method: 'post',
      path: '/api/v2/security-advisories',
      operationId: 'publishSecurityAdvisory',
      summary: 'Publish a security advisory',
      description:
        'Scope advisories:manage. Published at once as version 1 under a new tracking id, and served in the public feed ' +
        '(GET /api/v2/public/companies/{slug}/security-advisories) as a CSAF 2.0 document. Every affected product needs the ' +
        'remediation given (CSAF: an action statement per affected product).',
      tags: ['Security advisories'],
      auth,
      idempotency: 'recommended',
      request: { body: AdvisoryInput },
      responses: { 201: { description: 'Published', schema: dataEnvelope(AdvisorySchema) } },
      errors: ['VALIDATION_ERROR'],
      handler: async ({ principal, body, correlationId }) => {
        const a = await publishAdvisory(db, context(principal, correlationId), body);
        return { status: 201, body: { data: view(a, await slugOf(db, principal.tenant.id)) } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/security-advisories',
      operationId: 'listSecurityAdvisories',
      summary: "The workspace's security advisories, newest first",
      description: 'Scope advisories:manage. Published and withdrawn ones, cursor-paged.',
      tags: ['Security advisories'],
      auth,
      request: { query: PageQuery },
      responses: { 200: { description: 'One page', schema: pageEnvelope(AdvisorySchema) } },
      handler: async ({ principal, query }) => {
        const page = await listAdvisories(db, principal.tenant.id, query);
        const slug = await slugOf(db, principal.tenant.id);
        return { status: 200, body: { ...page, data: page.data.map((a) => view(a, slug)) } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/security-advisories/{advisoryId}',
      operationId: 'getSecurityAdvisory',
      summary: 'One security advisory with its revision history',
      tags: ['Security advisories'],
      auth,
      request: { params: IdParam },
      responses: { 200: one },
      errors: ['ADVISORY_NOT_FOUND'],
      handler: async ({ principal, params }) => {
        const a = await getAdvisory(db, principal.tenant.id, params.advisoryId);
        return { status: 200, body: { data: view(a, await slugOf(db, principal.tenant.id)) } };
      },
    }),
    route({
      method: 'patch',
      path: '/api/v2/security-advisories/{advisoryId}',
      operationId: 'updateSecurityAdvisory',
      summary: 'Publish a new version of a security advisory',
      description:
        'Scope advisories:manage. The fields given replace the current ones (arrays whole); revisionSummary goes into the ' +
        'revision history. A new version is published at once; changes that leave the advisory as it is make none. A ' +
        'withdrawn advisory is final: 409 INVALID_TRANSITION.',
      tags: ['Security advisories'],
      auth,
      idempotency: 'recommended',
      request: { params: IdParam, body: AdvisoryChanges },
      responses: { 200: one },
      errors: ['ADVISORY_NOT_FOUND', 'INVALID_TRANSITION', 'VALIDATION_ERROR'],
      handler: async ({ principal, params, body, correlationId }) => {
        const { revisionSummary, ...changes } = body as { revisionSummary: string } & Record<string, unknown>;
        const { advisory } = await updateAdvisory(
          db,
          context(principal, correlationId),
          params.advisoryId,
          changes,
          revisionSummary,
        );
        return { status: 200, body: { data: view(advisory, await slugOf(db, principal.tenant.id)) } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/security-advisories/{advisoryId}/withdraw',
      operationId: 'withdrawSecurityAdvisory',
      summary: 'Withdraw a security advisory',
      description:
        'Scope advisories:manage. A last version whose revision history and notes say why; it stays in the feed so tools ' +
        'learn it was withdrawn. Withdrawing it again answers 200 and changes nothing.',
      tags: ['Security advisories'],
      auth,
      idempotency: 'recommended',
      request: { params: IdParam, body: WithdrawBody },
      responses: { 200: one },
      errors: ['ADVISORY_NOT_FOUND', 'VALIDATION_ERROR'],
      handler: async ({ principal, params, body, correlationId }) => {
        const { advisory } = await withdrawAdvisory(
          db,
          context(principal, correlationId),
          params.advisoryId,
          body.reason,
        );
        return { status: 200, body: { data: view(advisory, await slugOf(db, principal.tenant.id)) } };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/companies/{slug}/security-advisories',
      operationId: 'getSecurityAdvisoryFeed',
      summary: "A company's security advisory feed (ROLIE, CSAF 2.0)",
      description:
        'No credential; CORS from any origin; 60 requests a minute per client IP (IP_RATE_LIMITS advisories). A ROLIE feed ' +
        '(RFC 8322, JSON) of every advisory the company published, newest first, each entry linking its CSAF 2.0 document; ' +
        'withdrawn ones stay listed, marked so. An empty entry list means none were published. 404 COMPANY_NOT_FOUND for a ' +
        'slug no company goes by; anything that keeps the whole feed from being served answers 503 ' +
        'SECURITY_ADVISORY_FEED_UNAVAILABLE (never a partial list).',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'advisories' },
      request: { params: SlugParam },
      responses: { 200: { description: 'The feed', schema: Loose } },
      errors: ['COMPANY_NOT_FOUND', 'SECURITY_ADVISORY_FEED_UNAVAILABLE'],
      handler: async ({ params }) => {
        const body = await failClosed(params.slug, async (publisher, tenantId) =>
          rolieFeed(await allAdvisories(db, tenantId), publisher, publicBaseUrl, deps.now()),
        );
        return { status: 200, body, headers: FEED_HEADERS };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/companies/{slug}/security-advisories/{trackingId}',
      operationId: 'getSecurityAdvisoryDocument',
      summary: 'One security advisory as a CSAF 2.0 document',
      description:
        'No credential; CORS; the same per-IP budget as the feed. The csaf_security_advisory profile, current version, ' +
        'with the whole revision history. 404 COMPANY_NOT_FOUND, 404 ADVISORY_NOT_FOUND; 503 ' +
        'SECURITY_ADVISORY_FEED_UNAVAILABLE when it cannot be served.',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'advisories' },
      request: { params: DocParams },
      responses: { 200: { description: 'The CSAF document', schema: Loose } },
      errors: ['COMPANY_NOT_FOUND', 'ADVISORY_NOT_FOUND', 'SECURITY_ADVISORY_FEED_UNAVAILABLE'],
      handler: async ({ params }) => {
        const body = await failClosed(params.slug, async (publisher, tenantId) => {
          const a = await advisoryByTrackingId(db, tenantId, params.trackingId);
          if (!a)
            throw new ApiError('ADVISORY_NOT_FOUND', 'No advisory with this tracking id', {
              details: { trackingId: params.trackingId },
            });
          return csafDocument(a, publisher, publicBaseUrl);
        });
        return { status: 200, body, headers: FEED_HEADERS };
      },
    }),
  ];
}

function unavailable(cause: unknown): ApiError {
  return new ApiError(
    'SECURITY_ADVISORY_FEED_UNAVAILABLE',
    'The security advisory feed cannot be served right now; retry later',
    { cause, headers: { 'Retry-After': '30' } },
  );
}
