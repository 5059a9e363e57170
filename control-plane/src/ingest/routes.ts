import type { Request } from 'express';
import { z } from 'zod';
import { recordAudit } from '../audit/index.js';
import {
  ApiError,
  IDEMPOTENCY_HEADER,
  readIdempotencyKey,
  actorOf,
  route,
  type RouteDef,
  dataEnvelope,
  CursorQuery,
  LimitQuery,
  pageEnvelope,
} from '../http/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db } from '../store/index.js';
import { MAX_STORED_ERRORS, STATUS_ERRORS, getJob, jobView, listJobCreated, listJobErrors } from './jobs.js';
import { INGEST_FORMATS, type IngestFormat } from './rows.js';
import { INGEST_LIMITS, receiveUpload } from './upload.js';

const ErrorRow = z.object({
  row: z
    .number()
    .int()
    .meta({ description: '1-based data row (CSV: the first line after the header is row 1)' }),
  code: z.string(),
  message: z.string(),
  field: z.string().optional(),
});

const IngestJobSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['queued', 'processing', 'completed', 'failed']),
    format: z.enum(INGEST_FORMATS),
    totalRows: z.number().int(),
    processedRows: z.number().int().meta({ description: 'Rows handled (created or failed), committed' }),
    createdRows: z.number().int(),
    failedRows: z.number().int(),
    progress: z.number().meta({ description: 'processedRows / totalRows, 0 to 1' }),
    errors: z.array(ErrorRow).meta({ description: `The first ${STATUS_ERRORS} row errors by row` }),
    errorsStored: z
      .number()
      .int()
      .meta({ description: `Row errors kept (at most ${MAX_STORED_ERRORS})` }),
    errorsTruncated: z.boolean().meta({ description: 'More rows failed than errors were kept' }),
    error: z.string().nullable().meta({ description: 'Why the job failed as a whole (status failed)' }),
    attempts: z.number().int(),
    bytes: z.number().int(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
    statusUrl: z.string(),
    _links: z.object({ self: z.string(), created: z.string(), errors: z.string() }),
  })
  .meta({ id: 'IngestJob' });

const JobParam = z.object({ jobId: z.uuid() });
const PageQuery = z.object({ limit: LimitQuery, cursor: CursorQuery }).strict();

/** Media types of uploads and the format each means. */
const MEDIA: readonly [string, IngestFormat][] = [
  ['text/csv', 'csv'],
  ['application/csv', 'csv'],
  ['application/x-ndjson', 'ndjson'],
  ['application/ndjson', 'ndjson'],
  ['application/jsonl', 'ndjson'],
  ['application/json', 'json'],
  ['application/*+json', 'json'],
];

function uploadFormat(req: Request, explicit: IngestFormat | undefined): IngestFormat {
  const type = req.get('content-type') ?? '';
  const charset = /;\s*charset="?([^;"]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset && !['utf-8', 'utf8', 'us-ascii'].includes(charset)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the upload as UTF-8, not ${charset}`);
  }
  if (explicit) return explicit;
  const match = MEDIA.find(([m]) => req.is(m));
  if (!match) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the upload as ${MEDIA.map(([m]) => m).join(', ')}`, {
      details: { contentType: type || null },
    });
  }
  return match[1];
}

export interface IngestRouteDeps {
  db: Db;
  registry: SchemaRegistry;
  now: () => number;
  limits?: Partial<typeof INGEST_LIMITS>;
}

/** POST /ingest/products and its status routes (api-v2.md: 202, status URL, CALLBACK_URL_UNSUPPORTED). */
export function ingestRoutes(deps: IngestRouteDeps): RouteDef[] {
  const { db } = deps;
  const readJob = async (tenantId: string, jobId: string) => {
    const job = await getJob(db, tenantId, jobId);
    if (!job) throw ApiError.notFound('Ingest job');
    return job;
  };
  const statusScopes = { scopes: ['products:create', 'products:read'] } as const;
  return [
    route({
      method: 'post',
      path: '/api/v2/ingest/products',
      operationId: 'ingestProducts',
      summary: 'Bulk import products from CSV, a JSON array or NDJSON; answered 202 with a status URL',
      description:
        'The body streams: text/csv with the import template columns (GET /schemas/categories/{category}/' +
        'import-template; extension cells are typed by the row category schema, arrays split on |), ' +
        'application/json as [ProductCreate, ...] or { "items": [...] }, or application/x-ndjson with one ' +
        'ProductCreate per line (?format=csv|json|ndjson overrides the Content-Type). The upload is stored as ' +
        'it arrives and checked once: a malformed document, a bad CSV header or a limit breach is refused ' +
        `(400/413/415) and nothing is kept. At most ${INGEST_LIMITS.maxRows} rows and ` +
        `${INGEST_LIMITS.maxBytes / 1024 / 1024} MiB. Once 202 is answered nothing is lost: a worker validates ` +
        'every row with the create contract of POST /products and commits 500 rows per transaction, recording ' +
        'progress with them; after a crash the job resumes after the last committed row. Poll statusUrl ' +
        '(also the Location header). callbackUrl, in the query or the JSON object, is 400 ' +
        'CALLBACK_URL_UNSUPPORTED. Idempotency-Key: the same key with the same bytes answers the first job ' +
        '(Idempotent-Replayed: true); with other bytes a plain 409.',
      tags: ['Ingest'],
      auth: { scopes: ['products:create'] },
      idempotency: 'recommended',
      rawBody: true,
      request: {
        query: z
          .object({
            format: z.enum(INGEST_FORMATS).optional().meta({ description: 'csv, json or ndjson' }),
            callbackUrl: z
              .unknown()
              .optional()
              .meta({ description: 'Not supported: 400 CALLBACK_URL_UNSUPPORTED' }),
          })
          .strict(),
      },
      responses: {
        202: {
          description: 'Accepted; poll statusUrl',
          schema: dataEnvelope(IngestJobSchema),
          headers: { Location: 'The status URL' },
        },
      },
      errors: ['CALLBACK_URL_UNSUPPORTED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      handler: async ({ principal, query, req, correlationId }) => {
        if (query.callbackUrl !== undefined) {
          throw new ApiError(
            'CALLBACK_URL_UNSUPPORTED',
            'Ingest does not call back; poll the status URL of the 202 answer instead',
            { details: { field: 'callbackUrl' } },
          );
        }
        const format = uploadFormat(req, query.format);
        const idempotencyKey = readIdempotencyKey(req.get(IDEMPOTENCY_HEADER), 'recommended');
        const { job, replayed } = await receiveUpload(db, {
          tenantId: principal.tenant.id,
          actor: actorOf(principal),
          correlationId,
          format,
          idempotencyKey,
          body: req,
          registry: deps.registry,
          now: deps.now,
          ...(deps.limits ? { limits: deps.limits } : {}),
        });
        if (!replayed) {
          await recordAudit(db, {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            action: 'products.ingest_accepted',
            resource: { type: 'ingest_job', id: job.id },
            correlationId,
            details: { format, rows: job.total_rows, bytes: job.bytes },
          });
        }
        const view = await jobView(db, job);
        return {
          status: 202,
          body: { data: view },
          headers: { Location: view.statusUrl, ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}) },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/ingest/products/{jobId}',
      operationId: 'getIngestJob',
      summary: 'Progress of an import: counts, the first row errors, and links to all errors and created ids',
      tags: ['Ingest'],
      auth: statusScopes,
      request: { params: JobParam },
      responses: { 200: { description: 'The job', schema: dataEnvelope(IngestJobSchema) } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: { data: await jobView(db, await readJob(principal.tenant.id, params.jobId)) },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/ingest/products/{jobId}/created',
      operationId: 'listIngestCreated',
      summary: 'The products an import created, by row (cursor-paged)',
      description: 'A product deleted since the import is no longer listed.',
      tags: ['Ingest'],
      auth: statusScopes,
      request: { params: JobParam, query: PageQuery },
      responses: {
        200: {
          description: 'One page of created products',
          schema: pageEnvelope(z.object({ row: z.number().int(), productId: z.uuid() })),
        },
      },
      handler: async ({ principal, params, query }) => {
        await readJob(principal.tenant.id, params.jobId);
        return { status: 200, body: await listJobCreated(db, principal.tenant.id, params.jobId, query) };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/ingest/products/{jobId}/errors',
      operationId: 'listIngestErrors',
      summary: `The row errors of an import, by row (cursor-paged; the first ${MAX_STORED_ERRORS} are kept)`,
      tags: ['Ingest'],
      auth: statusScopes,
      request: { params: JobParam, query: PageQuery },
      responses: { 200: { description: 'One page of row errors', schema: pageEnvelope(ErrorRow) } },
      handler: async ({ principal, params, query }) => {
        await readJob(principal.tenant.id, params.jobId);
        return { status: 200, body: await listJobErrors(db, params.jobId, query) };
      },
    }),
  ];
}
