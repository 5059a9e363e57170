import { type EventType, isCatalogueEvent, retiredEventReplacement } from '@dpp/shared';
import { ApiError } from '../http/index.js';

/**
 * Checks a subscription's event types against the catalogue (api-v2.md, Webhook management): a retired
 * type is 422 RETIRED_EVENT_TYPE naming its replacement; any other non-catalogue name is 422
 * UNKNOWN_EVENT_TYPE listing every unknown name. Retired names are reported first, since the answer
 * tells the caller exactly what to write instead. Returns the types without duplicates, in order.
 */
export function checkEventTypes(events: readonly string[]): EventType[] {
  for (const type of events) {
    const replacement = retiredEventReplacement(type);
    if (replacement) {
      throw new ApiError(
        'RETIRED_EVENT_TYPE',
        `Event type ${type} is retired; subscribe to ${replacement} instead`,
        { details: { field: 'events', eventType: type, replacement } },
      );
    }
  }
  const unknown = events.filter((type) => !isCatalogueEvent(type));
  if (unknown.length > 0) {
    throw new ApiError('UNKNOWN_EVENT_TYPE', `Not in the event catalogue: ${unknown.join(', ')}`, {
      details: { field: 'events', unknown },
    });
  }
  return [...new Set(events as EventType[])];
}
