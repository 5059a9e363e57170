/**
 * The event catalogue: every event type a webhook can subscribe to, in one place.
 * api-v2.md (Events) names the types; `data` fields beyond those named there are ours.
 * Retired types are refused on subscription with their replacement named (422 RETIRED_EVENT_TYPE).
 *
 * @example
 * isCatalogueEvent('product.created') // true
 * retiredEventReplacement('passport.published') // 'product.published'
 */
export const EVENT_TYPES = {
  'product.created': 'A product was created (POST /products, batch, ingest).',
  'product.updated': 'A product was updated or moved through its lifecycle.',
  'product.deleted': 'A never-published product was deleted.',
  'product.published': 'A passport version was published (POST /dpp/{productId}/publish).',
  'carrier.generated': 'Serials were allocated for a product; data.exportPath names the print file.',
  'print.confirmed': 'Serials were confirmed printed (print-status report or an AIDC job SEALED).',
  'print.failed': 'Serials failed to print (print-status report or an AIDC job DEAD_LETTER).',
  'revocation.created': 'A passport was revoked (PASSPORT.REVOKE).',
  'approval.completed': 'A passport was approved (PASSPORT.APPROVE).',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** Retired event types and the type that replaced each. */
export const RETIRED_EVENT_TYPES: Readonly<Record<string, EventType>> = {
  'dpp.published': 'product.published',
  'passport.published': 'product.published',
  'print.completed': 'print.confirmed',
  'carrier.created': 'carrier.generated',
};

/** The date-shaped version every webhook envelope carries in `apiVersion`. */
export const WEBHOOK_API_VERSION = '2026-11-01';

export function isCatalogueEvent(type: string): type is EventType {
  return Object.prototype.hasOwnProperty.call(EVENT_TYPES, type);
}

export function retiredEventReplacement(type: string): EventType | undefined {
  return Object.prototype.hasOwnProperty.call(RETIRED_EVENT_TYPES, type)
    ? RETIRED_EVENT_TYPES[type]
    : undefined;
}

/** The envelope of one webhook delivery (api-v2.md, Resources: Webhook delivery envelope). */
export interface WebhookEnvelope<T = Record<string, unknown>> {
  id: string;
  type: EventType;
  timestamp: string;
  apiVersion: string;
  data: T;
}
