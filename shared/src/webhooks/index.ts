/** Webhook delivery signatures (Standard Webhooks style V2, legacy V1) and their verification. */
export { WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export { WEBHOOK_SECRET_PREFIX, generateWebhookSecret } from './secret.js';
export { WEBHOOK_HEADERS, signWebhook, type SignWebhookInput, type WebhookSignatureHeaders } from './sign.js';
export {
  verifyLegacyWebhookSignature,
  verifyWebhook,
  verifyWebhookSignature,
  type IncomingWebhookHeaders,
  type VerifiedWebhookSignature,
  type VerifyWebhookOptions,
} from './verify.js';
export { verifiedWebhookEnvelopeSchema, type VerifiedWebhookEnvelope } from './envelope.js';
