/**
 * DELETE /api/v2/dpp/{productId}, DELETE and PATCH of /api/v1/dpps/{dppId} and /api/v2/dpps/{dppId}, and the
 * market status (POST /api/v2/backup/passport/{dppId}/market-status): the routes api-v2.md names only by their
 * errors. In production they need an eIDAS actor identity that cannot be
 * bound yet: DELETE /dpp answers 503 EIDAS_ACTOR_BINDING_UNAVAILABLE in the error envelope; the /dpps routes
 * answer 501 with no body and the code in X-Service-Error-Code (a delete, or a write of category or
 * customData). In development and test they work on passports never published (retention.ts).
 */
import { z } from 'zod';
import { ApiError, actorOf, dataEnvelope, route, type Principal, type RouteDef } from '../http/index.js';
import { ProductSchema, ProductUpdateSchema, updateProduct } from '../products/index.js';
import { ProductIdParam } from './api-schemas.js';
import { MARKET_STATUSES, marketStatusHistory, recordMarketStatus } from './market-status.js';
import { archiveUnpublished, assertNeverPublished, findPassport } from './retention.js';
import type { PassportRouteDeps } from './routes.js';

const DppIdParam = z.object({ dppId: z.uuid() });

const ArchivedSchema = z
  .object({
    dppId: z.uuid(),
    state: z.literal('archived'),
    archivedAt: z.iso.datetime(),
    changed: z.boolean().meta({ description: 'False when it was archived already' }),
  })
  .meta({ id: 'DppArchived' });

const MarketStatusBody = z
  .strictObject({
    status: z.enum(MARKET_STATUSES, { error: `must be one of ${MARKET_STATUSES.join(', ')}` }),
    reason: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'Why; required to withdraw or recall' }),
    effectiveAt: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 date-time' })
      .optional()
      .meta({ description: 'When the change took effect on the market; now when omitted' }),
  })
  .refine((b) => b.status === 'placed_on_market' || b.reason !== undefined, {
    path: ['reason'],
    message: 'is required to withdraw or recall an item',
  })
  .meta({ id: 'MarketStatusChange' });

const MarketStatusEntrySchema = z
  .object({
    status: z.enum(MARKET_STATUSES),
    reason: z.string().nullable(),
    effectiveAt: z.iso.datetime(),
    recordedAt: z.iso.datetime(),
    recordedBy: z.object({ type: z.string(), id: z.string().nullable() }),
  })
  .meta({ id: 'MarketStatusEntry' });

/** Fields whose write needs a bound eIDAS actor in a deployed environment (api-v2.md, Errors). */
const EIDAS_BOUND = ['category', 'customData'] as const;
const SERVICE_ERROR_HEADER = 'X-Service-Error-Code';

/** The /dpps answer in a deployed environment: 501, no body, the code in a header. */
const notBindable = () => ({
  status: 501,
  headers: { [SERVICE_ERROR_HEADER]: 'EIDAS_ACTOR_BINDING_UNAVAILABLE' },
});

export function dppRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  const production = deps.env === 'production';
  const context = (principal: Principal, correlationId: string) => ({
    tenantId: principal.tenant.id,
    actor: actorOf(principal),
    correlationId,
    now: deps.now,
    principalType: principal.type,
    principalId: principal.id,
  });
  const archived = {
    200: { description: 'Archived (or archived already)', schema: dataEnvelope(ArchivedSchema) },
  };

  const deleteDpps = (version: 'v1' | 'v2') =>
    route({
      method: 'delete',
      path: `/api/${version}/dpps/{dppId}`,
      operationId: version === 'v2' ? 'deleteDpp' : 'deleteDppV1',
      summary: 'Archive a passport that was never published',
      description:
        'Scope products:delete. In production: 501 with no body, X-Service-Error-Code: EIDAS_ACTOR_BINDING_UNAVAILABLE ' +
        '(no eIDAS actor identity can be bound yet). In development and test: a passport never published is archived, as ' +
        'PASSPORT.ARCHIVE does (a repeat answers it archived, changed false); one ever published is retained: 409 ' +
        'PUBLISHED_PASSPORT_RETAINED. The dppId is the passport id, which is its product id.',
      tags: ['Passports'],
      auth: { scopes: ['products:delete'] },
      request: { params: DppIdParam },
      responses: {
        ...archived,
        501: { description: 'Production: no eIDAS actor identity (code in the header)' },
      },
      errors: ['PASSPORT_NOT_FOUND', 'PUBLISHED_PASSPORT_RETAINED', 'INVALID_TRANSITION'],
      handler: async ({ principal, params, correlationId }) => {
        if (production) return notBindable();
        const outcome = await archiveUnpublished(db, context(principal, correlationId), params.dppId);
        return { status: 200, body: { data: outcome } };
      },
    });

  const patchDpps = (version: 'v1' | 'v2') =>
    route({
      method: 'patch',
      path: `/api/${version}/dpps/{dppId}`,
      operationId: version === 'v2' ? 'updateDpp' : 'updateDppV1',
      summary: 'Change the product data of a passport that was never published',
      description:
        'Scope products:edit. The body is PATCH /api/v2/products/{id}: the product the passport is generated from changes ' +
        '(a new product version; the next generation carries it). In production a write of category or customData is 501 ' +
        'with no body, X-Service-Error-Code: EIDAS_ACTOR_BINDING_UNAVAILABLE; other fields proceed. A passport ever ' +
        'published is retained: 409 PUBLISHED_PASSPORT_RETAINED (change the product through PATCH /products/{id}, or ' +
        'its passport through PASSPORT.EDIT).',
      tags: ['Passports'],
      auth: { scopes: ['products:edit'] },
      request: { params: DppIdParam, body: ProductUpdateSchema },
      responses: {
        200: { description: 'The product after the change', schema: dataEnvelope(ProductSchema) },
        501: { description: 'Production: category or customData needs an eIDAS actor (code in the header)' },
      },
      errors: ['PASSPORT_NOT_FOUND', 'PUBLISHED_PASSPORT_RETAINED', 'DUPLICATE_GTIN', 'DUPLICATE_SERIAL'],
      handler: async ({ principal, params, body, correlationId }) => {
        if (Object.keys(body).length === 0)
          throw ApiError.validation('body', 'body: send at least one field to change');
        if (production && EIDAS_BOUND.some((f) => f in body)) return notBindable();
        assertNeverPublished(await findPassport(db, principal.tenant.id, params.dppId));
        const product = await updateProduct(
          db,
          {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            correlationId,
            env: deps.env,
            registry: deps.registry,
            now: deps.now,
          },
          params.dppId,
          body,
          { unpublishedOnly: true },
        );
        return { status: 200, body: { data: product } };
      },
    });

  const marketStatusPath = '/api/v2/backup/passport/{dppId}/market-status';
  return [
    route({
      method: 'post',
      path: marketStatusPath,
      operationId: 'recordMarketStatus',
      summary: "Record the market status of a passport's item: placed on the market, withdrawn, recalled",
      description:
        'Scope products:edit. 503 EIDAS_ACTOR_BINDING_UNAVAILABLE in production. In development and test the change is ' +
        'recorded with who and when (the audit trail, GET on the same path) and the public passport shows the newest as ' +
        'marketStatus; a withdrawn or recalled passport stays served (never 410). An item is placed on the market only ' +
        'with a published passport (422 INVALID_STATE_TRANSITION) and withdrawn or recalled only once placed (409 ' +
        'INVALID_TRANSITION); withdrawing or recalling needs a reason. The status it already has answers 200 with its ' +
        'entry and records nothing.',
      tags: ['Passports'],
      auth: { scopes: ['products:edit'] },
      idempotency: 'recommended',
      request: { params: DppIdParam, body: MarketStatusBody },
      responses: {
        201: { description: 'Recorded', schema: dataEnvelope(MarketStatusEntrySchema) },
        200: {
          description: 'The item has this status already: its entry',
          schema: dataEnvelope(MarketStatusEntrySchema),
        },
      },
      errors: [
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        'PASSPORT_NOT_FOUND',
        'INVALID_STATE_TRANSITION',
        'INVALID_TRANSITION',
      ],
      handler: async ({ principal, params, body, correlationId }) => {
        if (production) {
          throw new ApiError(
            'EIDAS_ACTOR_BINDING_UNAVAILABLE',
            'No eIDAS actor identity can be bound yet; the market status was not recorded',
            { details: { dppId: params.dppId } },
          );
        }
        const { created, entry } = await recordMarketStatus(
          db,
          context(principal, correlationId),
          params.dppId,
          body,
        );
        return { status: created ? 201 : 200, body: { data: entry } };
      },
    }),
    route({
      method: 'get',
      path: marketStatusPath,
      operationId: 'listMarketStatus',
      summary: "The market status history of a passport's item, newest first",
      description:
        'Scope products:read. Every change recorded, with who recorded it and when; empty when none was.',
      tags: ['Passports'],
      auth: { scopes: ['products:read'] },
      request: { params: DppIdParam },
      responses: {
        200: { description: 'Newest first', schema: dataEnvelope(z.array(MarketStatusEntrySchema)) },
      },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params }) => {
        await findPassport(db, principal.tenant.id, params.dppId);
        return {
          status: 200,
          body: { data: await marketStatusHistory(db, principal.tenant.id, params.dppId) },
        };
      },
    }),
    route({
      method: 'delete',
      path: '/api/v2/dpp/{productId}',
      operationId: 'deleteProductDpp',
      summary: "Archive a product's passport that was never published",
      description:
        'Scope products:delete. 503 EIDAS_ACTOR_BINDING_UNAVAILABLE in production. In development and test, as DELETE ' +
        '/api/v2/dpps/{dppId}: a passport never published is archived; one ever published is 409 PUBLISHED_PASSPORT_RETAINED.',
      tags: ['Passports'],
      auth: { scopes: ['products:delete'] },
      request: { params: ProductIdParam },
      responses: archived,
      errors: [
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        'PASSPORT_NOT_FOUND',
        'PUBLISHED_PASSPORT_RETAINED',
        'INVALID_TRANSITION',
      ],
      handler: async ({ principal, params, correlationId }) => {
        if (production) {
          throw new ApiError(
            'EIDAS_ACTOR_BINDING_UNAVAILABLE',
            'No eIDAS actor identity can be bound yet; the passport was not deleted',
            { details: { productId: params.productId } },
          );
        }
        const outcome = await archiveUnpublished(db, context(principal, correlationId), params.productId);
        return { status: 200, body: { data: outcome } };
      },
    }),
    deleteDpps('v2'),
    patchDpps('v2'),
    deleteDpps('v1'),
    patchDpps('v1'),
  ];
}
