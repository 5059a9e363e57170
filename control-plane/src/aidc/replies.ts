/**
 * The print loop's answers in HTTP terms, for the routes: refusals onto the error envelope and the
 * result's kept answer as a reply. The services below know nothing of HTTP.
 */
import type { ErrorCode } from '@dpp/shared';
import { ApiError, type AnswerReply, type Principal, validationError } from '../http/index.js';
import type { JobView } from './model.js';
import { EvidenceInvalid, PrintJobRefused, type RefusalReason } from './refusal.js';
import type { Reporter } from './result.js';

const REFUSAL_CODES = {
  stale_attempt: 'STALE_ATTEMPT',
  lease_expired: 'ENVELOPE_EXPIRED',
  invalid_transition: 'INVALID_TRANSITION',
  not_permitted: 'FORBIDDEN',
  evidence_rejected: 'EVIDENCE_REJECTED',
} as const satisfies Record<Exclude<RefusalReason, 'job_not_found'>, ErrorCode>;

/** Rethrows a refusal of the print loop as the error the API answers; anything else as it is. */
export function refusalAsHttp(err: unknown): never {
  if (err instanceof EvidenceInvalid) throw validationError(err.issues, 'body');
  if (!(err instanceof PrintJobRefused)) throw err;
  // The spec's plain 404: no code.
  if (err.reason === 'job_not_found') throw ApiError.notFound('Print job');
  throw new ApiError(REFUSAL_CODES[err.reason], err.message, { details: err.details, cause: err });
}

/** A result's answer, as sent and as kept under its Idempotency-Key: `{ data: job }`. */
export const resultReply: AnswerReply<JobView> = {
  toReply: (job) => ({ status: 200, body: { data: job } }),
  fromReply: (reply) => (reply.body as { data: JobView }).data,
};

export function reporterOf(principal: Principal): Reporter {
  return {
    type: principal.type,
    id: principal.id,
    tenantId: principal.tenant.id,
    ...(principal.type === 'device' ? { publicJwk: principal.publicJwk } : {}),
  };
}
