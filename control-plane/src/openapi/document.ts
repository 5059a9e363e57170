import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '@dpp/shared';
import { ErrorEnvelopeSchema, type RouteDef } from '../http/index.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing or invalid credential (no code)',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed (no code)',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Rate limited',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Unavailable',
};

function errorsOf(def: RouteDef): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  const add = (status: number, code: string) => byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const codes: ErrorCode[] = [...(def.errors ?? [])];
  if (def.request?.body || def.request?.query || def.request?.params) codes.push('VALIDATION_ERROR');
  if (def.idempotency === 'required') codes.push('IDEMPOTENCY_KEY_REQUIRED');
  if (def.auth !== 'none') {
    add(401, '(no code)');
    codes.push('SANDBOX_EXPIRED', def.auth.deniedCode ?? 'API_SCOPE_DENIED');
    if (def.auth.minTier && def.auth.deniedCode !== 'FORBIDDEN') codes.push('FORBIDDEN');
    if (def.rateLimited !== false) codes.push('RATE_LIMITED');
  } else if (def.rateLimited !== false) {
    codes.push('RATE_LIMITED'); // the per-client-IP budget (IP_RATE_LIMITS)
  }
  if (def.idempotency && def.idempotency !== 'none')
    add(409, '(no code: Idempotency-Key reused with another request)');
  for (const c of new Set(codes)) add(ERROR_CODES[c], c);
  if (/\{[^}]+\}/.test(def.path) && !byStatus.has(404)) add(404, '(no code)');
  return byStatus;
}

function toRouteConfig(def: RouteDef): RouteConfig {
  const responses: RouteConfig['responses'] = {};
  for (const [status, spec] of Object.entries(def.responses)) {
    responses[status] = {
      description: spec.description,
      ...(spec.schema
        ? { content: { [spec.contentType ?? 'application/json']: { schema: spec.schema } } }
        : spec.contentType
          ? { content: { [spec.contentType]: { schema: { type: 'string' } } } }
          : {}),
    };
  }
  for (const [status, codes] of errorsOf(def)) {
    if (responses[status]) continue;
    responses[status] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`,
      content: { 'application/json': { schema: ErrorEnvelopeSchema } },
    };
  }
  const headers =
    def.idempotency && def.idempotency !== 'none'
      ? z.object({
          'Idempotency-Key': (def.idempotency === 'required' ? z.uuid() : z.uuid().optional()).meta({
            description: `Idempotency key (${def.idempotency}): a repeat with the same body replays the first answer`,
          }),
        })
      : undefined;
  const scopes = def.auth === 'none' ? [] : [...def.auth.scopes];
  return {
    method: def.method,
    path: def.path,
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    security: def.auth === 'none' ? [] : [{ bearerAuth: scopes }, { apiKeyHeader: scopes }],
    'x-required-scopes': scopes,
    'x-idempotency': def.idempotency ?? 'none',
    ...(def.auth !== 'none' && def.auth.minTier ? { 'x-minimum-tier': def.auth.minTier } : {}),
    request: {
      ...(def.request?.params ? { params: def.request.params as unknown as z.ZodObject } : {}),
      ...(def.request?.query ? { query: def.request.query as unknown as z.ZodObject } : {}),
      ...(headers ? { headers } : {}),
      ...(def.request?.body
        ? { body: { required: true, content: { 'application/json': { schema: def.request.body } } } }
        : {}),
    },
    responses,
  } as RouteConfig;
}

export interface DocumentInfo {
  serverUrl: string;
  version: string;
}

/** The OpenAPI 3.1 document of every operation, generated from the schemas that validate requests. */
export function buildOpenApiDocument(
  routes: readonly RouteDef[],
  info: DocumentInfo,
): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key secret (dpp_sk_...) or an OAuth access token',
  });
  registry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
  });
  for (const def of routes) registry.registerPath(toRouteConfig(def));
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Digital Product Passport API',
      version: info.version,
      description:
        'The v2 API of the DPP print floor control plane. Errors use `{ "error": { "code", "message", "details" } }`. ' +
        'Every operation states its scope (x-required-scopes) and Idempotency-Key policy (x-idempotency). ' +
        'Any operation refuses a JSON body nested deeper than 64 levels or holding a number outside the range of ' +
        'an IEEE 754 double with 400 VALIDATION_ERROR (details.bound names the bound), and a request line and ' +
        'headers over 16 KB with 431 HEADERS_TOO_LARGE.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: info.serverUrl }],
  }) as unknown as Record<string, unknown>;
}

/**
 * The JSON Schema catalogue: every named schema (those with a `.meta({ id })`) as a JSON Schema
 * (draft 2020-12) document, with `$ref`s between them resolvable at `${base}/{id}.json`.
 */
export function buildJsonSchemaCatalogue(base: string): Record<string, Record<string, unknown>> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `${base}/${id}.json`,
    unrepresentable: 'any',
    io: 'output',
  }) as { schemas: Record<string, Record<string, unknown>> };
  return schemas;
}
