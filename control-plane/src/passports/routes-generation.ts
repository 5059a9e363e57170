import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CODES, type ErrorCode } from '@dpp/shared';
import { ApiError, route, type RouteDef } from '../http/index.js';
import { GenerateBody, GenerationStatusSchema, RequestIdParam } from './api-schemas.js';
import { generationView, requestGeneration } from './generate.js';
import { getGeneration, type GenerationError } from './generation-store.js';
import type { PassportRouteDeps } from './routes.js';

/** Longest `Prefer: wait` honoured, in seconds. */
export const MAX_PREFER_WAIT_S = 30;

/** RFC 7240 §4.3 `Prefer: wait=<seconds>`, capped; undefined when absent. */
export function preferWait(header: string | undefined): number | undefined {
  const m = header ? /(?:^|[,;\s])wait\s*=\s*(\d+)/i.exec(header) : null;
  return m ? Math.min(Number(m[1]), MAX_PREFER_WAIT_S) : undefined;
}

/** The error a finished, failed request answers with when the caller waited for it. */
function failedReply(error: GenerationError): ApiError {
  const code: ErrorCode = error.code in ERROR_CODES ? (error.code as ErrorCode) : 'INTERNAL_ERROR';
  return new ApiError(code, error.message, error.details ? { details: error.details } : {});
}

export function generationRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/dpp/generate',
      operationId: 'generatePassport',
      summary: 'Generate a passport: the 6-stage pipeline, asynchronously',
      description:
        'Scope dpp:edit (supply_chain:edit is not enough here and passport:write does not satisfy it). Checks at once that the ' +
        'product is ready_for_dpp (422 INVALID_STATE_TRANSITION), that anchoring can be honoured (anchorToBlockchain is ignored in ' +
        'the sandbox; elsewhere no chain is configured: 503 ANCHORING_UNAVAILABLE) and that the credentials the category requires ' +
        'are anchored (422 MISSING_REQUIRED_CREDENTIALS, details.missingCredentials, details.issued false). Then answers 202 with ' +
        'the request (Location: its status) and runs the stages load_product, check_schema, resolve_credentials, ' +
        'assemble_content, sign_credential, persist_passport. With `Prefer: wait=N` (RFC 7240, at most 30 s) the call waits: a ' +
        'succeeded request answers 200, a failed one its error (502 ISSUANCE_FAILED or ISSUANCE_NOT_CONFIRMED with ' +
        'details.status linking the request status, 422 ...), one still running 202. A product with a request still queued or ' +
        'running gets that request back.',
      tags: ['Passports'],
      auth: { scopes: ['dpp:edit'] },
      idempotency: 'recommended',
      request: { body: GenerateBody },
      responses: {
        202: { description: 'Queued (or still running)', schema: GenerationStatusSchema },
        200: {
          description: 'Finished while the caller waited (Prefer: wait)',
          schema: GenerationStatusSchema,
        },
      },
      errors: [
        'INVALID_STATE_TRANSITION',
        'MISSING_REQUIRED_CREDENTIALS',
        'ANCHORING_UNAVAILABLE',
        'ISSUANCE_FAILED',
        'ISSUANCE_NOT_CONFIRMED',
        'EXTENSIONS_REQUIRED',
        'SCHEMA_NOT_FOUND',
      ],
      handler: async ({ principal, body, correlationId, req }) => {
        let row = await requestGeneration(
          { db, now: deps.now, ...(deps.onGenerationQueued ? { onQueued: deps.onGenerationQueued } : {}) },
          principal,
          body,
          correlationId,
        );
        const wait = preferWait(req.get('prefer'));
        const headers: Record<string, string> = {
          Location: `/api/v2/dpp/status/${row.id}`,
          'Retry-After': '1',
        };
        if (wait !== undefined) {
          headers['Preference-Applied'] = `wait=${wait}`;
          const until = Date.now() + wait * 1000;
          while ((row.status === 'queued' || row.status === 'running') && Date.now() < until) {
            await sleep(25);
            row = (await getGeneration(db, principal.tenant.id, row.id)) ?? row;
          }
          if (row.status === 'failed' && row.error) {
            const err = failedReply(JSON.parse(row.error) as GenerationError);
            Object.assign(err, { headers: { ...err.headers, Location: headers.Location } });
            throw err;
          }
        }
        return { status: row.status === 'succeeded' ? 200 : 202, body: generationView(row), headers };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/dpp/status/{requestId}',
      operationId: 'getPassportGenerationStatus',
      summary: 'Status of a generation request: status, stage, each stage with its times, errors',
      description:
        'Scope dpp:read. status is queued, running, succeeded or failed; stages lists the six stages, each pending, running, ' +
        'succeeded, failed or skipped with startedAt and finishedAt; error is the typed error of a failed request ' +
        '({ code, message, details } with details.status linking here).',
      tags: ['Passports'],
      auth: { scopes: ['dpp:read'] },
      request: { params: RequestIdParam },
      responses: { 200: { description: 'The request', schema: GenerationStatusSchema } },
      handler: async ({ principal, params }) => {
        const row = await getGeneration(db, principal.tenant.id, params.requestId);
        if (!row) throw ApiError.notFound('Generation request');
        return { status: 200, body: generationView(row) };
      },
    }),
  ];
}
