/**
 * The print loop's answers in HTTP terms, for the routes: refusals onto the error envelope and the
 * result's kept answer as a reply. The services below know nothing of HTTP.
 */
import type { ErrorCode } from '@dpp/shared';
import {
  ApiError,
  type AnswerReply,
  type Principal,
  type PublicEffect,
  validationError,
} from '../http/index.js';
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

/**
 * What results may have changed of the public answers (a route's `publicEffect`): the resolver's answer of
 * each label they sealed, which now links the label's proof. Nothing else a result writes (the job, its
 * attempt and evidence, the serial's print status) is shown to the public.
 */
export function sealedLabels(jobs: readonly JobView[]): PublicEffect {
  return jobs.filter((j) => j.state === 'SEALED').map((j) => ({ gtin: j.gtin, serial: j.serial }));
}

export function reporterOf(principal: Principal): Reporter {
  return {
    type: principal.type,
    id: principal.id,
    tenantId: principal.tenant.id,
    ...(principal.type === 'device' ? { publicJwk: principal.publicJwk } : {}),
  };
}
