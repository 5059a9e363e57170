import { z } from 'zod';
import { ApiError, publicRoute, type RouteDef } from '../http/index.js';
import { buildJsonSchemaCatalogue, buildOpenApiDocument } from './document.js';

const CATALOGUE_PATH = '/api/v2/json-schemas';

/**
 * Public, unauthenticated: the OpenAPI document and the JSON Schema catalogue. `routes` is a getter so
 * the document includes every operation mounted, this one included.
 */
export function openApiRoutes(deps: {
  routes: () => readonly RouteDef[];
  publicBaseUrl: string;
  version: string;
}) {
  let doc: Record<string, unknown> | undefined;
  let catalogue: Record<string, Record<string, unknown>> | undefined;
  const getCatalogue = () =>
    (catalogue ??= buildJsonSchemaCatalogue(`${deps.publicBaseUrl}${CATALOGUE_PATH}`));
  const defs: RouteDef[] = [
    publicRoute({
      method: 'get',
      path: '/api/v2/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'The OpenAPI 3.1 document of this API',
      tags: ['Meta'],
      auth: 'none',
      responses: { 200: { description: 'OpenAPI 3.1 document', contentType: 'application/json' } },
      handler: async () => ({
        status: 200,
        body: (doc ??= buildOpenApiDocument(deps.routes(), {
          serverUrl: deps.publicBaseUrl,
          version: deps.version,
        })),
      }),
    }),
    publicRoute({
      method: 'get',
      path: CATALOGUE_PATH,
      operationId: 'listJsonSchemas',
      summary: 'The JSON Schema catalogue: every named request and response schema',
      tags: ['Meta'],
      auth: 'none',
      responses: {
        200: {
          description: 'Catalogue index',
          schema: z.object({ data: z.array(z.object({ id: z.string(), url: z.string() })) }),
        },
      },
      handler: async () => ({
        status: 200,
        body: {
          data: Object.keys(getCatalogue())
            .sort()
            .map((id) => ({ id, url: `${deps.publicBaseUrl}${CATALOGUE_PATH}/${id}.json` })),
        },
      }),
    }),
    publicRoute({
      method: 'get',
      path: `${CATALOGUE_PATH}/{file}`,
      operationId: 'getJsonSchema',
      summary: 'One JSON Schema (draft 2020-12) of the catalogue, e.g. Product.json',
      tags: ['Meta'],
      auth: 'none',
      request: { params: z.object({ file: z.string().regex(/^[A-Za-z0-9_]+\.json$/) }) },
      responses: { 200: { description: 'A JSON Schema', contentType: 'application/schema+json' } },
      handler: async ({ params }) => {
        const schema = getCatalogue()[params.file.replace(/\.json$/, '')];
        if (!schema) throw ApiError.notFound('Schema');
        return { status: 200, body: schema, headers: { 'Content-Type': 'application/schema+json' } };
      },
    }),
  ];
  return defs;
}
