/**
 * The device protocol's batch calls (docs/device-protocol.md, "Batches"): claims for several printers in
 * one call, and results that happen together in one call. Each claim and each result inside is exactly the
 * single route's; a batch shares the round trip, the credential check and the transaction.
 */
import {
  ClaimBatchRequestSchema,
  ClaimBatchSchema,
  DEVICE_SCOPE,
  ResultBatchRequestSchema,
  ResultOutcomeSchema,
  type ResultOutcome,
} from '@dpp/shared';
import { z } from 'zod';
import {
  type ApiError,
  dataEnvelope,
  operationKey,
  requestHash,
  route,
  toApiError,
  type RouteDef,
  nothingPublic,
} from '../http/index.js';
import { claimJobs } from './claim.js';
import { asCurrent, claimAs, refusalAsHttp, reporterOf, resultReply, sealedLabels } from './replies.js';
import { reportResults } from './result-batch.js';
import type { AidcRouteDeps } from './routes.js';

/** The route a batched result stands for: its Idempotency-Key is the same key on either. */
const SINGLE_RESULT_ROUTE = 'POST /api/v2/aidc/jobs/{ref}/result';

/** A refused or failed result as the single route would have answered it. */
function errorOutcome(jobRef: string, err: unknown): ResultOutcome {
  let apiError: ApiError;
  try {
    refusalAsHttp(err);
  } catch (mapped) {
    apiError = toApiError(mapped);
  }
  const body = apiError!.toBody();
  return { jobRef, status: apiError!.status, error: body.error };
}

export function aidcBatchRoutes(deps: AidcRouteDeps): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/claims',
      operationId: 'claimPrintJobs',
      firstInLine: true,
      publicEffect: nothingPublic,
      summary: 'A device claims for several printers at once, and may take the next jobs ahead (prefetch)',
      description:
        'Each printer takes up to `count` jobs (default 1), oldest first, as `POST /aidc/jobs/claim` would one ' +
        'by one: every claim is its own attempt with its own lease, `attempt_id` and envelope. 200 with the ' +
        'claims in request order, an empty array when there is no work. At most 64 claims a call.',
      tags: ['Print jobs'],
      auth: { scopes: [DEVICE_SCOPE], principals: ['device'], checkedInStatement: true },
      request: { body: ClaimBatchRequestSchema },
      errors: ['FORBIDDEN'],
      responses: { 200: { description: 'Claimed (maybe none)', schema: dataEnvelope(ClaimBatchSchema) } },
      handler: async ({ principal, body }) => {
        const claimed = await claimAs(
          principal,
          body.printers.map((p) => p.name),
          (as, onlyIf) => claimJobs(deps.claim, as.tenant.id, as.id, body.printers, onlyIf),
        );
        return { status: 200, body: { data: claimed } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/results',
      operationId: 'reportPrintResults',
      deferrable: true,
      publicEffect: (reply) =>
        sealedLabels(
          (reply.body as { data: ResultOutcome[] }).data.flatMap((o) =>
            o.status === 200 && o.data ? [o.data] : [],
          ),
        ),
      summary: 'Report results that happen together (several printers, or several steps of one job) at once',
      description:
        'Each result carries its `jobRef` and its own `idempotencyKey` and is applied in order, exactly as ' +
        '`POST /aidc/jobs/{jobRef}/result` with that Idempotency-Key would (a later result of a job sees the ' +
        'earlier ones); a refused result changes nothing and the others still apply. 200 with one outcome ' +
        'per result: the status and body the single route would have answered. A key used on either route ' +
        'replays on the other. At most 200 results a call.',
      tags: ['Print jobs'],
      auth: {
        scopes: [DEVICE_SCOPE, 'aidc:jobs'],
        principals: ['device', 'api_key'],
        checkedInStatement: true,
      },
      request: { body: ResultBatchRequestSchema },
      responses: {
        200: { description: 'One outcome per result', schema: dataEnvelope(z.array(ResultOutcomeSchema)) },
      },
      handler: async ({ principal, body, req, correlationId, log }) => {
        const { idempotencyTtlHours: ttlHours, now } = deps.result;
        const raw = (req.body as { results: Record<string, unknown>[] }).results;
        const batch = body.results.map((r, i) => {
          // Hashed as the single route hashes its request: its path and the body it would have carried.
          const { jobRef: _ref, idempotencyKey: _key, ...single } = raw[i]!;
          const scope = {
            tenantId: principal.tenant.id,
            route: SINGLE_RESULT_ROUTE,
            key: r.idempotencyKey.toLowerCase(),
            requestHash: requestHash(`/api/v2/aidc/jobs/${r.jobRef}/result`, single),
          };
          return {
            jobRef: r.jobRef,
            input: { status: r.status, evidence: r.evidence, attempt_id: r.attempt_id },
            idempotency: operationKey(scope, { ttlHours, now }, resultReply),
          };
        });
        // A batch whose remembered device moved is made again as it is (its tenant is the token's, so its
        // keys are the same): it did nothing before it found out.
        const outcomes = await asCurrent(principal, (as) =>
          reportResults(deps.result, reporterOf(as), batch, correlationId),
        );
        const data = outcomes.map((o, i): ResultOutcome => {
          const jobRef = batch[i]!.jobRef;
          if (o.ok) return { jobRef, status: 200, data: o.job, ...(o.replayed ? { replayed: true } : {}) };
          const out = errorOutcome(jobRef, o.error);
          if (out.status >= 500) log.error({ err: o.error, jobRef }, 'batched result failed');
          return out;
        });
        return { status: 200, body: { data } };
      },
    }),
  ];
}
