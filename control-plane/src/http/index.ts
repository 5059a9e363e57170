/**
 * HTTP at the edge: routes and their replies, the error envelope, authentication, idempotency, paging
 * and the middleware the app is assembled from. The only door into http/ for every other folder.
 */

// What route modules and services use.
export * from './api-error.js';
export * from './route.js';
export * from './principal.js';
export * from './schemas.js';
export * from './validate.js';
export * from './paging.js';
export {
  IDEMPOTENCY_HEADER,
  operationKey,
  readIdempotencyKey,
  requestHash,
  type AnswerReply,
  type IdempotencyScope,
} from './idempotency.js';
export { parseBoundedJson } from './json-bounds.js';
export { errorReply, sendReply } from './reply.js';

// What the app and the server are assembled from.
export { mountRoutes, type MountDeps } from './mount.js';
export { errorHandler, notFoundOrMethodNotAllowed } from './errors.js';
export { CORRELATION_HEADER, correlationId, correlationIdOf } from './correlation.js';
export { requestLog } from './request-log.js';
export { answerParserErrors, securityHeaders, securityHeaderValues } from './edge.js';
export { RateLimiter, rateHeaderValues } from './rate-limit.js';
export {
  clientAddress,
  failedAttemptThrottle,
  ipBudgetKey,
  ipRateLimit,
  type IpLimiter,
  type Refusal,
} from './ip-limit.js';
export { RateShare } from './rate-share.js';
export { unauthorized } from './authenticate.js';
