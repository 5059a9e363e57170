import type { z } from 'zod';

/**
 * Why the print loop refused a heartbeat or a result. The routes map each reason onto the error
 * envelope (api-v2.md, Print jobs: 404, 409 STALE_ATTEMPT, 410 ENVELOPE_EXPIRED, 409 INVALID_TRANSITION,
 * 403 FORBIDDEN, 422 EVIDENCE_REJECTED).
 */
export type RefusalReason =
  | 'job_not_found'
  | 'stale_attempt'
  | 'lease_expired'
  | 'invalid_transition'
  | 'not_permitted'
  | 'evidence_rejected';

export class PrintJobRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'PrintJobRefused';
  }
}

/** The evidence of a result does not have the shape its status requires (a malformed request). */
export class EvidenceInvalid extends Error {
  constructor(readonly issues: readonly z.core.$ZodIssue[]) {
    super('The evidence does not have the shape its status requires');
    this.name = 'EvidenceInvalid';
  }
}

/**
 * The remembered principal a call was made as (http `Unconfirmed`) was no longer current when its claim or
 * results batch checked it: nothing was done; the principal is read again and the call made again for it.
 */
export class PrincipalMoved extends Error {
  constructor() {
    super('the principal remembered for this call is no longer current');
  }
}
