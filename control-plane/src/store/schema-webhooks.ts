/**
 * Tables of the webhooks domain (migration 0003). Same conventions as `schema.ts`: uuid text ids, ISO
 * 8601 UTC text timestamps, JSON as text, booleans as 0/1 integers.
 */

/** A subscription: where to POST which event types, signed with which secret. */
export interface WebhookEndpointTable {
  id: string;
  tenant_id: string;
  url: string;
  description: string | null;
  /** JSON array of catalogue event types. */
  events: string;
  /**
   * The signing secret, `whsec_<base64>`. Kept readable because every delivery is signed with it (an
   * HMAC key cannot be stored as a hash), sealed with SECRETS_KEY when one is set (store/secrets.ts); it
   * is never returned after the create or rotate answer.
   */
  secret: string;
  secret_rotated_at: string | null;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: string | null;
  /** First failed attempt since the last successful one; null while the endpoint is healthy. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** One event for one endpoint; its id is the delivery id, stable across every attempt. */
export interface WebhookDeliveryTable {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The envelope exactly as sent, serialised once so every attempt carries the same bytes. */
  payload: string;
  /** pending, delivered or failed. */
  status: string;
  attempts: number;
  /** When the next attempt is due; null once delivered or failed. */
  next_attempt_at: string | null;
  /** A claimed delivery is invisible to other workers until then (a crashed worker's claim expires). */
  locked_until: string | null;
  /** Fencing token of the current claim: only its holder may record the attempt. */
  claim_token: string | null;
  /** What asked for the next attempt: `schedule` (first try, automatic retry) or `manual` (retry endpoint). */
  next_trigger: string;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** One HTTP try of a delivery. */
export interface WebhookDeliveryAttemptTable {
  id: string;
  delivery_id: string;
  tenant_id: string;
  /** 1 for the first try, then 2, 3, ... */
  attempt: number;
  attempted_at: string;
  /** The receiver's status code; null when there was no answer (timeout, refused, reset). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** `schedule` for the first try and automatic retries, `manual` for the retry endpoint. */
  trigger: string;
}
