import { z } from 'zod';
import { actorOf, route, type RouteDef, UuidParam, dataEnvelope } from '../http/index.js';
import type { Db } from '../store/index.js';
import { getApiKey, listApiKeys, revokeApiKey, rotateApiKey } from './api-keys.js';

const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().meta({ description: 'First characters of the secret, for recognition' }),
    scopes: z.array(z.string()),
    createdAt: z.iso.datetime(),
    revokedAt: z.iso.datetime().nullable(),
    rotatedFrom: z.uuid().nullable().meta({ description: 'The key this one replaced by rotation' }),
    lastUsedAt: z.iso.datetime().nullable().meta({ description: 'Updated at most once a minute' }),
  })
  .meta({ id: 'ApiKey' });

const ApiKeyWithSecretSchema = ApiKeySchema.extend({
  secret: z.string().meta({ description: 'Shown once; only its hash is stored' }),
}).meta({ id: 'ApiKeyWithSecret' });

const scope = { scopes: ['keys:manage'] } as const;

export function apiKeyRoutes(deps: { db: Db }): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'get',
      path: '/api/v2/api-keys',
      operationId: 'listApiKeys',
      summary: "List the workspace's API keys (secrets are never returned)",
      tags: ['API keys'],
      auth: scope,
      responses: { 200: { description: 'Keys, newest first', schema: dataEnvelope(z.array(ApiKeySchema)) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: { data: await listApiKeys(db, principal.tenant.id) },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/api-keys/{id}',
      operationId: 'getApiKey',
      summary: 'Read one API key',
      tags: ['API keys'],
      auth: scope,
      request: { params: UuidParam },
      responses: { 200: { description: 'The key', schema: dataEnvelope(ApiKeySchema) } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: { data: await getApiKey(db, principal.tenant.id, params.id) },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/api-keys/{id}/rotate',
      operationId: 'rotateApiKey',
      summary:
        'Rotate a key: the old id is revoked, a new key (new data.id) with the same scopes is returned',
      description:
        'The new secret is shown once in this answer. Rotation is not replayed by Idempotency-Key, because ' +
        'that would mean keeping the secret; a repeated call answers 409 ALREADY_REVOKED.',
      tags: ['API keys'],
      auth: scope,
      request: { params: UuidParam },
      responses: {
        201: { description: 'The new key with its secret', schema: dataEnvelope(ApiKeyWithSecretSchema) },
      },
      errors: ['ALREADY_REVOKED'],
      handler: async ({ principal, params, correlationId }) => ({
        status: 201,
        body: {
          data: await rotateApiKey(db, principal.tenant.id, params.id, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/api-keys/{id}/revoke',
      operationId: 'revokeApiKey',
      summary: 'Revoke a key; it stops working at once',
      tags: ['API keys'],
      auth: scope,
      idempotency: 'recommended',
      request: { params: UuidParam },
      responses: { 200: { description: 'The revoked key', schema: dataEnvelope(ApiKeySchema) } },
      errors: ['ALREADY_REVOKED'],
      handler: async ({ principal, params, correlationId }) => ({
        status: 200,
        body: {
          data: await revokeApiKey(db, principal.tenant.id, params.id, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
  ];
}
