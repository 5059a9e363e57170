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
  unauthorized,
  validationError,
} from '../http/index.js';
import type { ClaimCondition } from './claim.js';
import type { JobView } from './model.js';
import { EvidenceInvalid, PrincipalMoved, PrintJobRefused, type RefusalReason } from './refusal.js';
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

/**
 * Throws 403 FORBIDDEN when a device enrolled for named printers claims for another one (the binding as read
 * when the call was authenticated).
 */
function checkPrinters(principal: Principal, printers: readonly string[]): void {
  const bound = principal.type === 'device' ? principal.printerNames : [];
  const other = bound.length > 0 ? printers.find((p) => !bound.includes(p)) : undefined;
  if (other !== undefined) {
    throw new ApiError('FORBIDDEN', `Printer ${other} is not one this device was enrolled for`, {
      details: { printer: other, enrolledPrinters: bound },
    });
  }
}

/**
 * A claim for these printers as the principal, refused (403) for a printer its enrollment does not bind it
 * to. A principal remembered from an earlier call (`Unconfirmed`, the claim routes' `checkedInStatement`) is
 * not read first: the claim holds to its still being current, in its own statement, and throws
 * {@link PrincipalMoved} when it is not; a refusal of it is not given either ({@link asCurrent} reads the
 * principal again and makes the claim, or the refusal, for the principal read now).
 */
export function claimAs<T>(
  principal: Principal,
  printers: readonly string[],
  claim: (principal: Principal, onlyIf?: ClaimCondition) => Promise<T[]>,
): Promise<T[]> {
  return asCurrent(principal, (as) => {
    const unconfirmed = as.type === 'device' ? as.unconfirmed : undefined;
    try {
      checkPrinters(as, printers);
    } catch (err) {
      if (unconfirmed && err instanceof ApiError) throw new PrincipalMoved();
      throw err;
    }
    return claim(as, unconfirmed?.stillCurrent);
  });
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
    ...(principal.type === 'device'
      ? { publicJwk: principal.publicJwk, stillCurrent: principal.unconfirmed?.stillCurrent }
      : {}),
  };
}

/**
 * Runs an operation that checks a remembered principal itself (a claim's condition, a results batch's
 * `Reporter.stillCurrent`) and throws {@link PrincipalMoved}, having done nothing, when it is not current;
 * then runs it again for the principal read now, or answers 401 when there is none.
 */
export async function asCurrent<T>(
  principal: Principal,
  run: (principal: Principal) => Promise<T>,
): Promise<T> {
  try {
    return await run(principal);
  } catch (err) {
    const unconfirmed = principal.type === 'device' ? principal.unconfirmed : undefined;
    if (!(err instanceof PrincipalMoved) || !unconfirmed) throw err;
    const now = await unconfirmed.confirm();
    if (!now) throw unauthorized();
    return run(now);
  }
}
