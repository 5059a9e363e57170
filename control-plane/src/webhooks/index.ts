/** Webhooks: subscriptions, signed deliveries with retries, rotation (api-v2.md, Webhook management, Events). */
export { webhookRoutes, type WebhookRouteDeps } from './routes.js';
export { createWebhookRuntime, urlPolicyFor, type WebhookOptions, type WebhookRuntime } from './runtime.js';
export { webhookFanOut, type FanOutDeps } from './fan-out.js';
export {
  DEFAULT_DELIVERY_TUNING,
  DeliveryWorker,
  WEBHOOK_USER_AGENT,
  type DeliveryTuning,
  type DeliveryWorkerOptions,
} from './worker.js';
export {
  DEFAULT_DISABLE_AFTER_MS,
  DEFAULT_RETRY_SCHEDULE_MS,
  nextRetryDelay,
  verdictOf,
  type AttemptVerdict,
} from './schedule.js';
export {
  WebhookUrlPolicy,
  isNonPublicAddress,
  systemResolver,
  type HostResolver,
  type ResolvedAddress,
} from './url-policy.js';
export { WebhookEndpoints, type WebhookEndpointView } from './endpoints.js';
export { listDeliveries, retryDelivery, type DeliveryView, type DeliveryAttemptView } from './deliveries.js';
