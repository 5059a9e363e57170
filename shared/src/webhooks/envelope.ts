/**
 * The delivery envelope a verified body must hold (api-v2.md, Resources: Webhook delivery envelope):
 * `id` (uuid), `type`, `timestamp` (ISO 8601, the event's time, not the signing time), `apiVersion`
 * (date-shaped) and `data` (object). The event catalogue lives in `events/`; this shape check does not
 * restrict `type` to it, so a receiver pinned to an older catalogue still gets a typed envelope and
 * decides itself what to do with a type it does not know.
 */
import { z } from 'zod';

export const verifiedWebhookEnvelopeSchema = z.object({
  id: z.uuid(),
  type: z.string().min(1),
  timestamp: z.iso.datetime({ offset: true }),
  apiVersion: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'apiVersion is a date, YYYY-MM-DD'),
  data: z.record(z.string(), z.unknown()),
});

/** A delivery envelope whose signature, timestamp and shape have been checked. */
export type VerifiedWebhookEnvelope = z.infer<typeof verifiedWebhookEnvelopeSchema>;
