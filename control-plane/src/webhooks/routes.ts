import { pageEnvelope, actorOf, route, type RouteDef, UuidParam, dataEnvelope } from '../http/index.js';
import type { Db, SecretBox } from '../store/index.js';
import { listDeliveries, retryDelivery } from './deliveries.js';
import { WebhookEndpoints } from './endpoints.js';
import {
  CreateWebhookEndpointSchema,
  DeliveryRetryParams,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  UpdateWebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from './schemas.js';
import type { WebhookUrlPolicy } from './url-policy.js';

export interface WebhookRouteDeps {
  db: Db;
  secrets: SecretBox;
  policy: WebhookUrlPolicy;
  now?: () => number;
  /** Called after a manual retry was queued (wakes this process's delivery worker). */
  onDeliveryQueued?: () => void;
}

const auth = { scopes: ['webhooks:manage'] } as const;
const tags = ['Webhooks'];
const DEFAULT_PAGE = 20;

/**
 * The webhook management operations (api-v2.md, Webhook management). `GET /webhooks/deliveries` is
 * declared before `GET /webhooks/{id}` so Express matches the literal path first; `{id}` is a uuid in
 * any case.
 */
export function webhookRoutes(deps: WebhookRouteDeps): RouteDef[] {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const endpoints = new WebhookEndpoints({ db, secrets: deps.secrets, policy: deps.policy, now });
  return [
    route({
      method: 'get',
      path: '/api/v2/webhooks/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List delivery results, newest first, each with its attempts',
      description:
        'Filters combine. Each attempt gives its number, time, the status code or the error (timeout, ' +
        'connection error), its duration and whether it was scheduled or a manual retry.',
      tags,
      auth,
      request: { query: ListDeliveriesQuery },
      responses: {
        200: { description: 'A page of deliveries', schema: pageEnvelope(WebhookDeliverySchema) },
      },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: await listDeliveries(db, principal.tenant.id, {
          ...query,
          since: query.since ? new Date(query.since).toISOString() : undefined,
          limit: query.limit ?? DEFAULT_PAGE,
        }),
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/webhooks',
      operationId: 'createWebhookEndpoint',
      summary: 'Subscribe an endpoint to event types; its signing secret is returned once',
      description:
        'Deliveries are signed with the returned `secret` (see the delivery contract). An endpoint receives ' +
        'the events of its types that occur after it was created.',
      tags,
      auth,
      idempotency: 'recommended',
      request: { body: CreateWebhookEndpointSchema },
      responses: {
        201: {
          description: 'The endpoint with its secret',
          schema: dataEnvelope(WebhookEndpointWithSecretSchema),
        },
      },
      errors: ['UNKNOWN_EVENT_TYPE', 'RETIRED_EVENT_TYPE'],
      handler: async ({ principal, body, correlationId }) => ({
        status: 201,
        body: {
          data: await endpoints.create(principal.tenant.id, body, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/webhooks',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints, newest first (secrets are never returned)',
      tags,
      auth,
      request: { query: ListEndpointsQuery },
      responses: { 200: { description: 'A page of endpoints', schema: pageEnvelope(WebhookEndpointSchema) } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: await endpoints.list(principal.tenant.id, {
          limit: query.limit ?? DEFAULT_PAGE,
          cursor: query.cursor,
        }),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/webhooks/{id}',
      operationId: 'getWebhookEndpoint',
      summary: 'Read one webhook endpoint',
      tags,
      auth,
      request: { params: UuidParam },
      responses: { 200: { description: 'The endpoint', schema: dataEnvelope(WebhookEndpointSchema) } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: { data: await endpoints.get(principal.tenant.id, params.id) },
      }),
    }),
    route({
      method: 'patch',
      path: '/api/v2/webhooks/{id}',
      operationId: 'updateWebhookEndpoint',
      summary: 'Change url, events, description, or enable/disable an endpoint',
      description:
        'Setting `enabled` to true re-enables an endpoint, also one the service disabled after 3 days of ' +
        'failures; deliveries held while it was disabled resume. Events that occurred while it was ' +
        'disabled were not queued for it.',
      tags,
      auth,
      idempotency: 'recommended',
      request: { params: UuidParam, body: UpdateWebhookEndpointSchema },
      responses: { 200: { description: 'The endpoint', schema: dataEnvelope(WebhookEndpointSchema) } },
      errors: ['UNKNOWN_EVENT_TYPE', 'RETIRED_EVENT_TYPE'],
      handler: async ({ principal, params, body, correlationId }) => ({
        status: 200,
        body: {
          data: await endpoints.update(principal.tenant.id, params.id, body, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
    route({
      method: 'delete',
      path: '/api/v2/webhooks/{id}',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete an endpoint with its delivery history; nothing more is sent to it',
      tags,
      auth,
      request: { params: UuidParam },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ principal, params, correlationId }) => {
        await endpoints.delete(principal.tenant.id, params.id, { actor: actorOf(principal), correlationId });
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; afterwards every delivery is signed with the new secret only',
      description:
        'The new secret is returned once. Retries of earlier deliveries are signed with the new secret too. ' +
        'A delivery your receiver rejected during the switch can be sent again with the retry operation. ' +
        'Send an Idempotency-Key: a repeat then returns the same secret instead of rotating again.',
      tags,
      auth,
      idempotency: 'recommended',
      request: { params: UuidParam },
      responses: {
        200: {
          description: 'The endpoint with its new secret',
          schema: dataEnvelope(WebhookEndpointWithSecretSchema),
        },
      },
      handler: async ({ principal, params, correlationId }) => ({
        status: 200,
        body: {
          data: await endpoints.rotateSecret(principal.tenant.id, params.id, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/webhooks/{id}/deliveries/{deliveryId}/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again now, under the same delivery id',
      description:
        'Works on failed, delivered and pending deliveries. 409 (no code) while an attempt is in flight ' +
        'or while the endpoint is disabled.',
      tags,
      auth,
      idempotency: 'recommended',
      request: { params: DeliveryRetryParams },
      responses: {
        202: {
          description: 'Queued; the delivery as it now stands',
          schema: dataEnvelope(WebhookDeliverySchema),
        },
      },
      handler: async ({ principal, params, correlationId }) => {
        const data = await retryDelivery(
          db,
          principal.tenant.id,
          params.id,
          params.deliveryId,
          { actor: actorOf(principal), correlationId },
          now,
        );
        deps.onDeliveryQueued?.();
        return { status: 202, body: { data } };
      },
    }),
  ];
}
