import { z } from 'zod';
import {
  ClaimRequestSchema,
  ClaimedSchema,
  DEVICE_SCOPE,
  HeartbeatAnswerSchema,
  HeartbeatRequestSchema,
  JOB_STATES,
  JobRefSchema,
  LabelTemplateSchema,
  PrintJobDetailSchema,
  PrintJobSchema,
  PrintResultSchema,
  PrinterNameSchema,
  TRANSITIONS,
} from '@dpp/shared';
import {
  ApiError,
  operationKey,
  pageEnvelope,
  actorOf,
  route,
  type RouteDef,
  dataEnvelope,
  queryInt,
  nothingPublic,
} from '../http/index.js';
import { aidcBatchRoutes } from './batch-routes.js';
import { type ClaimDeps, claimJob, heartbeat } from './claim.js';
import type { JobService } from './jobs.js';
import { claimAs, refusalAsHttp, reporterOf, resultReply, sealedLabels } from './replies.js';
import { type ResultDeps, reportResult } from './result.js';

const RefParam = z.object({ ref: JobRefSchema });

const CreateJob = z
  .object({
    gtin: z.string().regex(/^\d{8}$|^\d{12,14}$/, 'must be a GTIN-8, -12, -13 or -14'),
    serial: z.string().min(1).max(20),
    printer: PrinterNameSchema.optional().meta({
      description: 'Bind the job to one printer name; any printer otherwise',
    }),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    labelTemplate: LabelTemplateSchema.partial().optional(),
  })
  .strict()
  .meta({ id: 'CreatePrintJob' });

export interface AidcRouteDeps {
  jobs: JobService;
  claim: ClaimDeps;
  result: ResultDeps;
}

const issuer = { scopes: ['aidc:jobs'] } as const;
const device = { scopes: [DEVICE_SCOPE], principals: ['device'] as const };

export function aidcRoutes(deps: AidcRouteDeps): RouteDef[] {
  const { jobs } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs',
      operationId: 'createPrintJob',
      summary: 'Queue a print job for an allocated serial whose passport is readyToPrint',
      description:
        'Devices of the tenant are told over MQTT that work waits. The label template defaults to the ' +
        "deployment's (50 x 30 mm, 203 dpi, QR magnification 4, RFID on); `textLines` may use {productName}, " +
        '{gtin} and {serial}.',
      tags: ['Print jobs'],
      auth: issuer,
      idempotency: 'recommended',
      request: { body: CreateJob },
      responses: { 201: { description: 'The queued job', schema: dataEnvelope(PrintJobSchema) } },
      errors: ['SERIAL_NOT_ALLOCATED', 'PASSPORT_NOT_READY', 'PRINT_JOB_EXISTS'],
      handler: async ({ principal, body, correlationId }) => {
        const job = await jobs.create(principal.tenant.id, body, actorOf(principal), correlationId);
        return { status: 201, body: { data: job }, headers: { Location: `/api/v2/aidc/jobs/${job.jobRef}` } };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/aidc/jobs',
      operationId: 'listPrintJobs',
      summary: 'List print jobs, newest first; filter by state, device, gtin or serial',
      tags: ['Print jobs'],
      auth: issuer,
      request: {
        query: z.object({
          state: z.enum(JOB_STATES).optional(),
          deviceId: z.uuid().optional(),
          gtin: z.string().max(14).optional(),
          serial: z.string().max(20).optional(),
          limit: queryInt(1, 200).default(50),
          cursor: JobRefSchema.optional(),
        }),
      },
      responses: {
        200: {
          description: 'A page of jobs',
          schema: pageEnvelope(PrintJobSchema),
        },
      },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: await jobs.list(principal.tenant.id, query),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/aidc/jobs/transitions',
      operationId: 'listPrintJobTransitions',
      summary: 'The print job state machine, generated from the table the service enforces',
      tags: ['Print jobs'],
      auth: { scopes: ['aidc:jobs', DEVICE_SCOPE], principals: ['api_key', 'device'] },
      responses: { 200: { description: 'States and transitions' } },
      handler: async () => ({
        status: 200,
        body: { data: { states: JOB_STATES, transitions: TRANSITIONS } },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/claim',
      operationId: 'claimPrintJob',
      firstInLine: true,
      publicEffect: nothingPublic,
      summary:
        'A device claims the oldest job its printer can print: a signed envelope, attempt_id and lease',
      description:
        '`envelope` is a compact JWS (EdDSA, typ `dpp-aidc-envelope+jws`, keys at /.well-known/jwks.json) whose ' +
        '`aud` is the device id and whose `exp` is the lease expiry. 204 when there is no work.',
      tags: ['Print jobs'],
      auth: { ...device, checkedInStatement: true },
      request: { body: ClaimRequestSchema },
      errors: ['FORBIDDEN'],
      responses: {
        200: {
          description: 'Claimed',
          schema: dataEnvelope(ClaimedSchema),
        },
        204: { description: 'No claimable job' },
      },
      handler: async ({ principal, body }) => {
        const [claimed] = await claimAs(principal, [body.printer.name], async (as, onlyIf) => {
          const one = await claimJob(deps.claim, as.tenant.id, as.id, body, onlyIf);
          return one ? [one] : [];
        });
        return claimed ? { status: 200, body: { data: claimed } } : { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/aidc/jobs/{ref}',
      operationId: 'getPrintJob',
      summary: 'Read a job with its attempts and evidence',
      tags: ['Print jobs'],
      auth: { scopes: ['aidc:jobs', DEVICE_SCOPE], principals: ['api_key', 'device'] },
      request: { params: RefParam },
      responses: { 200: { description: 'The job', schema: dataEnvelope(PrintJobDetailSchema) } },
      handler: async ({ principal, params }) => {
        const job = await jobs.get(principal.tenant.id, params.ref);
        if (principal.type === 'device' && !job.attempts.some((a) => a.deviceId === principal.id)) {
          throw ApiError.notFound('Print job');
        }
        return { status: 200, body: { data: job } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/{ref}/cancel',
      operationId: 'cancelPrintJob',
      summary: 'Cancel a QUEUED job (before any physical work)',
      tags: ['Print jobs'],
      auth: issuer,
      idempotency: 'recommended',
      request: { params: RefParam },
      responses: { 200: { description: 'The cancelled job', schema: dataEnvelope(PrintJobSchema) } },
      errors: ['INVALID_TRANSITION'],
      handler: async ({ principal, params, correlationId }) => ({
        status: 200,
        body: { data: await jobs.cancel(principal.tenant.id, params.ref, actorOf(principal), correlationId) },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/{ref}/heartbeat',
      operationId: 'heartbeatPrintJob',
      publicEffect: nothingPublic,
      summary: 'Extend the lease of the current attempt; returns a fresh envelope',
      tags: ['Print jobs'],
      auth: device,
      request: {
        params: RefParam,
        body: HeartbeatRequestSchema,
      },
      responses: {
        200: {
          description: 'Lease extended',
          schema: dataEnvelope(HeartbeatAnswerSchema),
        },
      },
      errors: ['STALE_ATTEMPT', 'ENVELOPE_EXPIRED', 'INVALID_TRANSITION'],
      handler: async ({ principal, params, body }) => {
        const answer = await heartbeat(
          deps.claim,
          principal.tenant.id,
          principal.id,
          params.ref,
          body.attempt_id,
          body.sending === true,
        ).catch(refusalAsHttp);
        return { status: 200, body: { data: answer } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/{ref}/result',
      operationId: 'reportPrintResult',
      deferrable: true,
      publicEffect: (reply) => sealedLabels([resultReply.fromReply(reply)]),
      summary:
        'Report a result of the current attempt with its evidence; moves the job as the spec table says',
      description:
        'Evidence per status: RENDERED `{ render_manifest }`, SPOOL_SUBMITTED `{ spool_receipt }`, PRINTED_ATTESTED ' +
        '`{ attestation }` (actor device or human, never the system), SCAN_VERIFIED `{ scan_result }`, SEALED ' +
        '`{ evidence_bundle: { jws } }` (signed by the device key), FAILED `{ failure: { reason, detail? } }`. The ' +
        'Idempotency-Key is claimed inside the transition transaction, so a retried result replays its answer.',
      tags: ['Print jobs'],
      auth: { scopes: [DEVICE_SCOPE, 'aidc:jobs'], principals: ['device', 'api_key'] },
      idempotency: 'required',
      idempotencyInOperation: true,
      request: { params: RefParam, body: PrintResultSchema },
      responses: {
        200: { description: 'The job after the transition', schema: dataEnvelope(PrintJobSchema) },
      },
      errors: ['STALE_ATTEMPT', 'ENVELOPE_EXPIRED', 'INVALID_TRANSITION', 'EVIDENCE_REJECTED', 'FORBIDDEN'],
      handler: async ({ principal, params, body, idempotency, correlationId }) => {
        const { idempotencyTtlHours: ttlHours, now } = deps.result;
        const key = idempotency ? operationKey(idempotency, { ttlHours, now }, resultReply) : null;
        const { job, replayed } = await reportResult(
          deps.result,
          reporterOf(principal),
          params.ref,
          body,
          key,
          correlationId,
        ).catch(refusalAsHttp);
        const reply = resultReply.toReply(job);
        return replayed ? { ...reply, headers: { 'Idempotent-Replayed': 'true' } } : reply;
      },
    }),
    ...aidcBatchRoutes(deps),
  ];
}
