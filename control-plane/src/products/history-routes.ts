import { z } from 'zod';
import {
  ApiError,
  route,
  type RouteDef,
  UuidParam,
  dataEnvelope,
  CursorQuery,
  LimitQuery,
  pageEnvelope,
} from '../http/index.js';
import type { Db } from '../store/index.js';
import { ProductEventSchema, ProductVersionSchema, TenantCategorySchema } from './api-schemas.js';
import { listProductEvents, listVersions } from './history.js';
import { productStatus } from './model.js';
import { categoryCounts, getProduct } from './queries.js';
import { read, type ProductRouteDeps } from './routes.js';

const PageQuery = z.object({ limit: LimitQuery, cursor: CursorQuery }).strict();

async function requireProduct(db: Db, tenantId: string, id: string): Promise<void> {
  if (!(await getProduct(db, tenantId, id))) throw ApiError.notFound('Product');
}

/** The tenant's categories with usage counts (api-v2.md, Products: GET /products/categories). */
async function tenantCategories(deps: ProductRouteDeps, tenantId: string) {
  const rows = await categoryCounts(deps.db, tenantId);
  const byCategory = new Map<string, z.infer<typeof TenantCategorySchema>>();
  for (const r of rows) {
    const schema = deps.registry.resolve(r.category, { at: deps.now() });
    const entry = byCategory.get(r.category) ?? {
      category: r.category,
      title: schema?.title ?? null,
      productCount: 0,
      statusCounts: {},
      currentSchemaVersion: schema?.version ?? null,
      lastUpdatedAt: r.last_updated_at,
    };
    const n = Number(r.n);
    const status = productStatus(r.stage, Number(r.voided) === 1 ? 'voided' : null);
    entry.productCount += n;
    entry.statusCounts[status] = (entry.statusCounts[status] ?? 0) + n;
    if (r.last_updated_at > entry.lastUpdatedAt) entry.lastUpdatedAt = r.last_updated_at;
    byCategory.set(r.category, entry);
  }
  return [...byCategory.values()].sort(
    (a, b) => b.productCount - a.productCount || a.category.localeCompare(b.category),
  );
}

/** GET /products/categories, /products/{id}/versions, /products/{id}/events. */
export function productHistoryRoutes(deps: ProductRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'get',
      path: '/api/v2/products/categories',
      operationId: 'listProductCategories',
      summary: "The workspace's own categories with usage counts",
      description: 'One entry per category the workspace has products in, most used first.',
      tags: ['Products'],
      auth: read,
      responses: {
        200: { description: 'Categories in use', schema: dataEnvelope(z.array(TenantCategorySchema)) },
      },
      handler: async ({ principal }) => ({
        status: 200,
        body: { data: await tenantCategories(deps, principal.tenant.id) },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/products/{id}/versions',
      operationId: 'listProductVersions',
      summary: 'The versions of a product, oldest first',
      description:
        'Every write (create, update, transition, void) makes a version with a full snapshot, the changed ' +
        'fields, the actor and the correlation id. Cursor-paged like the product list.',
      tags: ['Products'],
      auth: read,
      request: { params: UuidParam, query: PageQuery },
      responses: { 200: { description: 'One page of versions', schema: pageEnvelope(ProductVersionSchema) } },
      handler: async ({ principal, params, query }) => {
        await requireProduct(db, principal.tenant.id, params.id);
        return { status: 200, body: await listVersions(db, principal.tenant.id, params.id, query) };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/products/{id}/events',
      operationId: 'listProductEvents',
      summary: 'The domain events of a product, oldest first',
      description:
        'product.created, product.updated (writes, transitions with their reason, void). Cursor-paged.',
      tags: ['Products'],
      auth: read,
      request: { params: UuidParam, query: PageQuery },
      responses: { 200: { description: 'One page of events', schema: pageEnvelope(ProductEventSchema) } },
      handler: async ({ principal, params, query }) => {
        await requireProduct(db, principal.tenant.id, params.id);
        return { status: 200, body: await listProductEvents(db, principal.tenant.id, params.id, query) };
      },
    }),
  ];
}
