import { z } from 'zod';
import { EVENT_TYPES, WEBHOOK_API_VERSION } from '@dpp/shared';
import { queryInt } from '../http/index.js';
import { DELIVERY_STATUSES } from './deliveries.js';
import { MAX_URL_LENGTH } from './url-policy.js';

const eventNames = Object.keys(EVENT_TYPES).join(', ');

const EventList = z
  .array(z.string().min(1).max(100))
  .min(1)
  .max(50)
  .meta({
    description: `Catalogue event types to receive (${eventNames}). A retired type is 422 RETIRED_EVENT_TYPE naming its replacement; any other unknown name is 422 UNKNOWN_EVENT_TYPE.`,
  });

const Url = z.string().min(1).max(MAX_URL_LENGTH).meta({
  description:
    'http or https URL the deliveries are POSTed to. In production, hosts that are or resolve to loopback, private, link-local or unique-local addresses are refused (also re-checked at every delivery).',
});

const Description = z.string().max(500).nullable();

export const WebhookEndpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()),
    enabled: z
      .boolean()
      .meta({ description: 'Disabled endpoints receive nothing; PATCH enabled=true re-enables' }),
    disabledReason: z.enum(['disabled_by_user', 'failing_deliveries']).nullable().meta({
      description: 'failing_deliveries: every attempt failed for 3 days, so the service disabled it',
    }),
    disabledAt: z.iso.datetime().nullable(),
    failingSince: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'First failed attempt since the last successful one; null while healthy' }),
    secretRotatedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().meta({
    description:
      'Signing secret, `whsec_` + base64 of 32 random bytes; the HMAC key is the decoded part. Shown only in this answer.',
  }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const CreateWebhookEndpointSchema = z
  .object({ url: Url, events: EventList, description: Description.optional() })
  .meta({ id: 'CreateWebhookEndpoint' });

export const UpdateWebhookEndpointSchema = z
  .object({
    url: Url.optional(),
    events: EventList.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'name at least one of url, events, description, enabled',
  })
  .meta({ id: 'UpdateWebhookEndpoint' });

export const WebhookDeliveryAttemptSchema = z
  .object({
    attempt: z.int().min(1),
    at: z.iso.datetime(),
    statusCode: z.int().nullable().meta({ description: 'Null when there was no answer' }),
    error: z
      .string()
      .nullable()
      .meta({ description: 'Why there was no answer: timeout, connection error, refused address' }),
    durationMs: z.int().min(0),
    trigger: z.enum(['schedule', 'manual']),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const WebhookDeliverySchema = z
  .object({
    id: z
      .uuid()
      .meta({ description: 'The delivery id, sent as X-Service-Delivery-Id; the same on every attempt' }),
    endpointId: z.uuid(),
    eventId: z
      .uuid()
      .meta({ description: 'The envelope id: the same for every endpoint that receives the event' }),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.int().min(0),
    nextAttemptAt: z.iso.datetime().nullable(),
    lastStatusCode: z.int().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
    attempts: z.array(WebhookDeliveryAttemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });

/** The delivery envelope (api-v2.md, Resources: Webhook delivery envelope), documented for receivers. */
export const WebhookEnvelopeSchema = z
  .object({
    id: z.uuid().meta({ description: 'The event id' }),
    type: z.enum(Object.keys(EVENT_TYPES) as [keyof typeof EVENT_TYPES, ...(keyof typeof EVENT_TYPES)[]]),
    timestamp: z.iso.datetime().meta({ description: 'When the event occurred (not the signing time)' }),
    apiVersion: z
      .string()
      .meta({ description: `Date-shaped payload version, currently ${WEBHOOK_API_VERSION}` }),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'WebhookEnvelope' });

const Limit = queryInt(1, 100).optional().meta({ description: 'Page size, 1 to 100 (default 20)' });
const Cursor = z.string().min(1).max(500).optional();

export const ListEndpointsQuery = z.object({ limit: Limit, cursor: Cursor });

export const ListDeliveriesQuery = z.object({
  endpointId: z.uuid().optional(),
  eventType: z.string().min(1).max(100).optional(),
  eventId: z.uuid().optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'Only deliveries queued at or after this instant' }),
  limit: Limit,
  cursor: Cursor,
});

export const DeliveryRetryParams = z.object({ id: z.uuid(), deliveryId: z.uuid() });
