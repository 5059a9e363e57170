import { z } from 'zod';
import {
  DEVICE_SCOPE,
  JOB_STATES,
  LabelTemplateSchema,
  RESULT_STATES,
  TRANSITIONS,
  isTopicLevel,
} from '@dpp/shared';
import { ApiError } from '../http/api-error.js';
import { pageEnvelope } from '../http/paging.js';
import { actorOf } from '../http/principal.js';
import { route, type RouteDef } from '../http/route.js';
import { dataEnvelope } from '../http/schemas.js';
import { queryInt } from '../http/validate.js';
import { type ClaimDeps, claimJob, heartbeat } from './claim.js';
import type { JobService } from './jobs.js';
import { type ResultDeps, reportResult } from './result.js';

const JobRef = z.string().regex(/^job_[0-9a-v]{10}[0-9a-f]{10}$/, 'must be a job reference (job_...)');
const RefParam = z.object({ ref: JobRef });
const printerName = z.string().min(1).max(64).refine(isTopicLevel, 'must not contain /, + or #');

const JobSchema = z
  .object({
    jobRef: JobRef,
    state: z.enum(JOB_STATES),
    productId: z.string(),
    gtin: z.string(),
    serial: z.string(),
    digitalLink: z.string(),
    sgtin96Epc: z.string(),
    printer: z.string().nullable(),
    labelTemplate: LabelTemplateSchema,
    attemptId: z
      .string()
      .nullable()
      .meta({ description: 'The current attempt: the fencing token of every result' }),
    attemptCount: z.number().int(),
    maxAttempts: z.number().int(),
    deviceId: z.string().nullable(),
    leaseExpiresAt: z.iso.datetime().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    terminalAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'PrintJob' });

const JobDetailSchema = JobSchema.extend({
  attempts: z.array(
    z.object({
      attemptId: z.string(),
      number: z.number().int(),
      deviceId: z.string(),
      printer: z.string(),
      state: z.string(),
      claimedAt: z.iso.datetime(),
      endedAt: z.iso.datetime().nullable(),
      failureReason: z.string().nullable(),
    }),
  ),
  evidence: z.array(
    z.object({
      attemptId: z.string(),
      state: z.string(),
      kind: z.string(),
      payload: z.unknown(),
      actor: z.object({ type: z.string(), id: z.string().nullable() }),
      recordedAt: z.iso.datetime(),
    }),
  ),
}).meta({ id: 'PrintJobDetail' });

const CreateJob = z
  .object({
    gtin: z.string().regex(/^\d{8}$|^\d{12,14}$/, 'must be a GTIN-8, -12, -13 or -14'),
    serial: z.string().min(1).max(20),
    printer: printerName
      .optional()
      .meta({ description: 'Bind the job to one printer name; any printer otherwise' }),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    labelTemplate: LabelTemplateSchema.partial().optional(),
  })
  .strict()
  .meta({ id: 'CreatePrintJob' });

const ClaimBody = z
  .object({
    printer: z.object({ name: printerName, rfid: z.boolean().default(false) }),
  })
  .meta({ id: 'ClaimRequest' });

const ResultBody = z
  .object({
    status: z.enum(RESULT_STATES),
    evidence: z.record(z.string(), z.unknown()),
    attempt_id: z.uuid(),
  })
  .meta({ id: 'PrintResult' });

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
      responses: { 201: { description: 'The queued job', schema: dataEnvelope(JobSchema) } },
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
          cursor: JobRef.optional(),
        }),
      },
      responses: {
        200: {
          description: 'A page of jobs',
          schema: pageEnvelope(JobSchema),
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
      summary:
        'A device claims the oldest job its printer can print: a signed envelope, attempt_id and lease',
      description:
        '`envelope` is a compact JWS (EdDSA, typ `dpp-aidc-envelope+jws`, keys at /.well-known/jwks.json) whose ' +
        '`aud` is the device id and whose `exp` is the lease expiry. 204 when there is no work.',
      tags: ['Print jobs'],
      auth: device,
      request: { body: ClaimBody },
      errors: ['FORBIDDEN'],
      responses: {
        200: {
          description: 'Claimed',
          schema: dataEnvelope(
            z.object({
              job: JobSchema,
              attemptId: z.uuid(),
              envelope: z.string(),
              leaseExpiresAt: z.iso.datetime(),
            }),
          ),
        },
        204: { description: 'No claimable job' },
      },
      handler: async ({ principal, body }) => {
        // A device enrolled for named printers claims only for those (an enrollment binds it to them).
        const device = await deps.claim.db
          .selectFrom('devices')
          .select('printer_names')
          .where('id', '=', principal.id)
          .executeTakeFirst();
        const bound = device ? (JSON.parse(device.printer_names) as string[]) : [];
        if (bound.length > 0 && !bound.includes(body.printer.name)) {
          throw new ApiError(
            'FORBIDDEN',
            `Printer ${body.printer.name} is not one this device was enrolled for`,
            {
              details: { printer: body.printer.name, enrolledPrinters: bound },
            },
          );
        }
        const claimed = await claimJob(deps.claim, principal.tenant.id, principal.id, body);
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
      responses: { 200: { description: 'The job', schema: dataEnvelope(JobDetailSchema) } },
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
      responses: { 200: { description: 'The cancelled job', schema: dataEnvelope(JobSchema) } },
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
      summary: 'Extend the lease of the current attempt; returns a fresh envelope',
      tags: ['Print jobs'],
      auth: device,
      request: {
        params: RefParam,
        body: z
          .object({
            attempt_id: z.uuid(),
            sending: z
              .boolean()
              .optional()
              .meta({
                description:
                  'The send gate: true right before the device sends the label to the printer. Granted only on a ' +
                  'live lease; from then on the label may be out, so the attempt is never reaped into a re-print ' +
                  'and its device may renew the lease after it ran out.',
              }),
          })
          .meta({ id: 'Heartbeat' }),
      },
      responses: {
        200: {
          description: 'Lease extended',
          schema: dataEnvelope(z.object({ leaseExpiresAt: z.iso.datetime(), envelope: z.string() })),
        },
      },
      errors: ['STALE_ATTEMPT', 'ENVELOPE_EXPIRED', 'INVALID_TRANSITION'],
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: {
          data: await heartbeat(
            deps.claim,
            principal.tenant.id,
            principal.id,
            params.ref,
            body.attempt_id,
            body.sending === true,
          ),
        },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/aidc/jobs/{ref}/result',
      operationId: 'reportPrintResult',
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
      request: { params: RefParam, body: ResultBody },
      responses: { 200: { description: 'The job after the transition', schema: dataEnvelope(JobSchema) } },
      errors: ['STALE_ATTEMPT', 'ENVELOPE_EXPIRED', 'INVALID_TRANSITION', 'EVIDENCE_REJECTED', 'FORBIDDEN'],
      handler: async ({ principal, params, body, idempotency, correlationId }) => {
        const reply = await reportResult(
          deps.result,
          principal,
          params.ref,
          body,
          idempotency,
          correlationId,
        );
        return reply.replayed ? { ...reply, headers: { 'Idempotent-Replayed': 'true' } } : reply;
      },
    }),
  ];
}
