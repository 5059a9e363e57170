import type { Environment } from '../config/index.js';
import {
  ApiError,
  pageEnvelope,
  actorOf,
  type Principal,
  route,
  type RouteDef,
  UuidParam,
  dataEnvelope,
} from '../http/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db } from '../store/index.js';
import { BatchResultSchema, ProductSchema } from './api-schemas.js';
import { ProductBatchSchema, createBatch } from './batch.js';
import { createProduct } from './create.js';
import { ProductCreateSchema, ProductUpdateSchema } from './input.js';
import { ProductListQuery, listProducts } from './list.js';
import { toProductView } from './model.js';
import { getProduct } from './queries.js';
import { deleteProduct } from './remove.js';
import { prepareProduct, type WriteContext } from './rules.js';
import { updateProduct } from './update.js';

export interface ProductRouteDeps {
  db: Db;
  registry: SchemaRegistry;
  env: Environment;
  now: () => number;
}

export const read = { scopes: ['products:read'] } as const;
export const edit = { scopes: ['products:edit'] } as const;
const create = { scopes: ['products:create'] } as const;

/** Largest body of POST /products/batch: 1000 items with room for their extensions and customData. */
export const BATCH_BODY_LIMIT = '16mb';

export function writeContext(
  deps: ProductRouteDeps,
  principal: Principal,
  correlationId: string,
): WriteContext {
  return {
    tenantId: principal.tenant.id,
    actor: actorOf(principal),
    correlationId,
    env: deps.env,
    registry: deps.registry,
    now: deps.now,
  };
}

const STATUS_DOC =
  'status is Draft on create, then Validated and ReadyForDpp through lifecycle/transition (lifecycleStage ' +
  'holds the stage name), and Voided after void.';

/** Products: list, create, batch, read, update (PATCH and its PUT alias), delete. */
export function productCrudRoutes(deps: ProductRouteDeps): RouteDef[] {
  const { db } = deps;
  const update = (method: 'patch' | 'put') =>
    route({
      method,
      path: '/api/v2/products/{id}',
      operationId: method === 'patch' ? 'updateProduct' : 'replaceProduct',
      summary:
        method === 'patch'
          ? 'Update a product (canonical)'
          : 'Update a product (alias of PATCH with identical semantics)',
      description:
        'Any subset of the create fields; extensions and customData are JSON merge patches (null removes a ' +
        'member). The result is validated under the create rules. Every change writes a new version and ' +
        'emits product.updated; a patch that changes nothing answers the product without a new version. ' +
        'status moves only through lifecycle/transition and void; a voided product answers a plain 409. ' +
        'Changing category, gtin or customData of an ever-published product is 503 ' +
        'EIDAS_ACTOR_BINDING_UNAVAILABLE in production (development and test proceed).',
      tags: ['Products'],
      auth: edit,
      request: { params: UuidParam, body: ProductUpdateSchema },
      responses: {
        200: { description: 'The product after the update', schema: dataEnvelope(ProductSchema) },
      },
      errors: [
        'DUPLICATE_GTIN',
        'DUPLICATE_SERIAL',
        'SCHEMA_NOT_FOUND',
        'EXTENSIONS_REQUIRED',
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
      ],
      handler: async ({ principal, params, body, correlationId }) => {
        if (Object.keys(body).length === 0)
          throw ApiError.validation('body', 'body: send at least one field to change');
        const product = await updateProduct(
          db,
          writeContext(deps, principal, correlationId),
          params.id,
          body,
        );
        return { status: 200, body: { data: product } };
      },
    });

  return [
    route({
      method: 'get',
      path: '/api/v2/products',
      operationId: 'listProducts',
      summary: "List the workspace's products",
      description:
        'A data envelope with cursor paging: { data, hasMore, nextCursor }. Filters: category, status ' +
        '(comma-separated), gtin. sort: createdAt, updatedAt or productName, prefixed with - for descending ' +
        `(default -createdAt). ${STATUS_DOC}`,
      tags: ['Products'],
      auth: read,
      request: { query: ProductListQuery },
      responses: {
        200: {
          description: 'One page of products',
          schema: pageEnvelope(ProductSchema),
        },
      },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: await listProducts(db, principal.tenant.id, query),
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/products',
      operationId: 'createProduct',
      summary: 'Create a product (status Draft)',
      description:
        'The 201 answer is the product itself, not wrapped in data: capture id. The request fields name and ' +
        'description are returned as productName and productDescription; gtin is returned as 14 digits. ' +
        'Creating a product publishes nothing and registers no identifier. Emits product.created.',
      tags: ['Products'],
      auth: create,
      idempotency: 'recommended',
      request: { body: ProductCreateSchema },
      responses: {
        201: {
          description: 'The created product, unwrapped',
          schema: ProductSchema,
          headers: { Location: 'Path of the product' },
        },
      },
      errors: ['DUPLICATE_GTIN', 'DUPLICATE_SERIAL', 'SCHEMA_NOT_FOUND', 'EXTENSIONS_REQUIRED'],
      handler: async ({ principal, body, correlationId }) => {
        const ctx = writeContext(deps, principal, correlationId);
        const prepared = prepareProduct(body, ctx);
        if (!prepared.ok) throw prepared.error;
        const product = await createProduct(db, ctx, prepared.row);
        return { status: 201, body: product, headers: { Location: `/api/v2/products/${product.id}` } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/products/batch',
      operationId: 'createProductsBatch',
      summary: 'Create 1 to 1000 products in one call, each under the create contract',
      description:
        'Body { items: [ProductCreate, ...] } (at most 16 MB). Per-index isolation: good items commit ' +
        'together, a bad item fails alone. errors[] holds { index, error: "CODE: message", code, field? }; ' +
        'products[] the created ids by index. Answers 200 even when every item failed.',
      tags: ['Products'],
      auth: create,
      idempotency: 'recommended',
      bodyLimit: BATCH_BODY_LIMIT,
      request: { body: ProductBatchSchema },
      responses: { 200: { description: 'Counts and per-index errors', schema: BatchResultSchema } },
      errors: ['PAYLOAD_TOO_LARGE'],
      handler: async ({ principal, body, correlationId }) => ({
        status: 200,
        body: await createBatch(db, writeContext(deps, principal, correlationId), body.items),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/products/{id}',
      operationId: 'getProduct',
      summary: 'Read one product',
      description: `Another workspace's product is a plain 404. ${STATUS_DOC}`,
      tags: ['Products'],
      auth: read,
      request: { params: UuidParam },
      responses: { 200: { description: 'The product', schema: dataEnvelope(ProductSchema) } },
      handler: async ({ principal, params }) => {
        const row = await getProduct(db, principal.tenant.id, params.id);
        if (!row) throw ApiError.notFound('Product');
        return { status: 200, body: { data: toProductView(row) } };
      },
    }),
    update('patch'),
    update('put'),
    route({
      method: 'delete',
      path: '/api/v2/products/{id}',
      operationId: 'deleteProduct',
      summary: 'Hard-delete a never-published product with no print-loop history',
      description:
        '204 on success; the product and its versions are gone, its events stay. 409 ' +
        'PUBLISHED_PASSPORT_RETAINED when a passport was ever published; 409 PRODUCT_REFERENCED when its ' +
        'serials entered the print loop (void it instead). Emits product.deleted.',
      tags: ['Products'],
      auth: { scopes: ['products:delete'] },
      request: { params: UuidParam },
      responses: { 204: { description: 'Deleted' } },
      errors: ['PUBLISHED_PASSPORT_RETAINED', 'PRODUCT_REFERENCED'],
      handler: async ({ principal, params, correlationId }) => {
        await deleteProduct(db, writeContext(deps, principal, correlationId), params.id);
        return { status: 204 };
      },
    }),
  ];
}
