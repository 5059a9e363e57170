import { ApiError, type AnswerReply, operationKey, actorOf, route, type RouteDef } from '../http/index.js';
import type { Db } from '../store/index.js';
import { allocateSerials } from './allocate.js';
import { exportPages, exportStream, type ExportFilter } from './export.js';
import { PRINT_STATES, type PrintState } from './model.js';
import { type PrintStatusAnswer, batchKeyScope, reportPrintStatus } from './print-status.js';
import { BatchBody, BatchResponse, ExportQuery, PrintStatusBody, PrintStatusResponse } from './schemas.js';

export interface CarrierRouteDeps {
  db: Db;
  /** Origin of the Digital Links in the print file (config.publicBaseUrl). */
  publicBaseUrl: string;
  idempotencyTtlHours: number;
  now: () => number;
}

/** A batch answer lists up to 10,000 serials; a print-status body up to 1,000 results. */
const BODY_LIMIT = '2mb';

function parsePrintState(value: string | undefined): PrintState | undefined {
  if (value === undefined) return undefined;
  if ((PRINT_STATES as readonly string[]).includes(value)) return value as PrintState;
  throw new ApiError('INVALID_PRINT_STATE', `printState must be one of ${PRINT_STATES.join(', ')}`, {
    details: { printState: value, allowed: [...PRINT_STATES] },
  });
}

/** Resolves the export's product and batch filters; an unknown one (or another tenant's) is 404. */
async function exportFilter(
  db: Db,
  tenantId: string,
  query: { productId?: string | undefined; batchId?: string | undefined },
  printState: PrintState | undefined,
): Promise<ExportFilter> {
  if (query.productId !== undefined) {
    const product = await db
      .selectFrom('products')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', query.productId)
      .executeTakeFirst();
    if (!product) throw ApiError.notFound('Product');
  }
  let range: ExportFilter['range'];
  if (query.batchId !== undefined) {
    const batch = await db
      .selectFrom('carrier_batches')
      .select(['product_id', 'first_serial', 'last_serial'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', query.batchId)
      .executeTakeFirst();
    if (!batch || (query.productId !== undefined && batch.product_id !== query.productId)) {
      throw ApiError.notFound('Batch');
    }
    range = { first: Number(batch.first_serial), last: Number(batch.last_serial) };
  }
  return { tenantId, productId: query.productId, range, printState };
}

/** A print-status answer, as sent and as kept under the batch's key: the answer is the body. */
const printStatusReply: AnswerReply<PrintStatusAnswer> = {
  toReply: (answer) => ({ status: 200, body: answer }),
  fromReply: (reply) => reply.body as PrintStatusAnswer,
};

/** POST /carriers/batch, GET /carriers/export, POST /carriers/print-status. */
export function carrierRoutes(deps: CarrierRouteDeps): RouteDef[] {
  const { db, now } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/carriers/batch',
      operationId: 'allocateCarrierSerials',
      summary: 'Allocate serials for a product',
      description:
        "Takes count serials from the workspace's serial sequence: numeric, ascending from 1, shared by every " +
        'product of the workspace, so a serial alone identifies a label within the workspace and is unique ' +
        'per GTIN. A serial is never reused (the sequence never goes back, not even when a product is ' +
        'deleted) and concurrent calls never overlap. Every serial fits SGTIN-96 (at most 2^38 - 1); a ' +
        'batch that would pass it is 422 SERIAL_SPACE_EXHAUSTED. The product enters the print loop (it can ' +
        'no longer be deleted: 409 PRODUCT_REFERENCED). Emits carrier.generated with exportPath. An ' +
        "unknown product (or another workspace's) is 404; a voided one 409 PRODUCT_VOIDED. Instead of count, " +
        'serials registers serials made elsewhere (any AI (21) serial, e.g. alphanumeric), all or nothing: ' +
        'each takes its number from the same counter, so ordering, export paging and the never-reused rule ' +
        'hold. A serial that is not an AI (21) serial is 400 INVALID_SERIAL, one sent twice 400 ' +
        'VALIDATION_ERROR, one of the counter form (decimal without a leading zero) 422 ' +
        'SERIAL_RESERVED_FOR_COUNTER, one the product cannot encode (epcScheme sgtin-96) 422 ' +
        'SERIAL_NOT_SGTIN96, one the workspace has 409 SERIAL_ALREADY_ALLOCATED; details.serials names them. ' +
        "Each serial's EPC is SGTIN-96 when it fits, else SGTIN-198 (or as the product's epcScheme says).",
      tags: ['Carriers'],
      auth: { scopes: ['production:create'] },
      idempotency: 'recommended',
      request: { body: BatchBody },
      responses: { 201: { description: 'The allocated serials', schema: BatchResponse } },
      errors: [
        'PRODUCT_VOIDED',
        'SERIAL_SPACE_EXHAUSTED',
        'INVALID_SERIAL',
        'SERIAL_RESERVED_FOR_COUNTER',
        'SERIAL_NOT_SGTIN96',
        'SERIAL_ALREADY_ALLOCATED',
      ],
      handler: async ({ principal, body, correlationId }) => ({
        status: 201,
        body: await allocateSerials(
          db,
          { tenantId: principal.tenant.id, actor: actorOf(principal), correlationId, now },
          body.serials === undefined
            ? { productId: body.productId, count: body.count! }
            : { productId: body.productId, serials: body.serials },
        ),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/carriers/export',
      operationId: 'exportCarriers',
      summary: 'Export the print file',
      description:
        'Columns gtin, serial, digital_link (the QR payload) and sgtin96_epc (for the RFID encoder; empty ' +
        'for a serial encoded as SGTIN-198), then sgtin198_epc (52 hex digits, empty for SGTIN-96) and ' +
        'element_string ((01)…(21)…, for a DataMatrix or GS1-128), in ' +
        'serial order, streamed: CSV by default (RFC 4180, CRLF, with a header line), or format=json for ' +
        '{ "data": [ { gtin, serial, digital_link, sgtin96_epc, sgtin198_epc, element_string } ] }. ' +
        'productId and batchId narrow it; ' +
        'without them it lists every serial of the workspace. printState narrows to the reported outcome: ' +
        'printed, failed (exactly the re-print file: serials whose latest outcome is failed) or pending ' +
        '(no outcome yet); another value is 422 INVALID_PRINT_STATE.',
      tags: ['Carriers'],
      auth: { scopes: ['production:view'] },
      request: { query: ExportQuery },
      responses: {
        200: {
          description: 'The print file (text/csv, or application/json with format=json)',
          contentType: 'text/csv',
          headers: { 'Content-Disposition': 'attachment; filename="carriers-....csv"' },
        },
      },
      errors: ['INVALID_PRINT_STATE'],
      handler: async ({ principal, query }) => {
        const printState = parsePrintState(query.printState);
        const filter = await exportFilter(db, principal.tenant.id, query, printState);
        const format = query.format ?? 'csv';
        const name = ['carriers', query.productId, query.batchId, printState].filter(Boolean).join('-');
        return {
          status: 200,
          stream: exportStream(exportPages(db, deps.publicBaseUrl, filter), format),
          contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
          headers: {
            'Content-Disposition': `attachment; filename="${name}.${format}"`,
            'Cache-Control': 'no-store',
          },
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/carriers/print-status',
      operationId: 'reportPrintStatus',
      summary: 'Report print outcomes per serial',
      description:
        "Up to 1,000 results. (1) Each outcome replaces the serial's metadata.print wholesale (status, reason, " +
        'deviceId, reportedAt); the last result for a serial wins, also within one request. (2) The batch is ' +
        'its own idempotency key (SHA-256 of the workspace and the canonical JSON of results): an identical ' +
        'batch within the idempotency window (24 h by default) answers the first response again, ' +
        'Idempotent-Replayed: true, and queues nothing; changing any outcome makes a new batch. (3) Serials ' +
        'the workspace does not have (or not under the gtin a result names) are listed in unknown; the rest ' +
        'commit. (4) One print.confirmed for the printed serials and, when any failed, print.failed with ' +
        'failures[] and their reasons, split into chunks of 250 sharing the reportRef; events[] gives each ' +
        'type, its dispatch and the chunk count. Serials newly printed also get an EPCIS commissioning ' +
        'ObjectEvent. (5) A failure to queue the events never fails the call: the outcomes commit and ' +
        'events[].dispatch says queue_failed; delivery results are at GET /webhooks/deliveries.',
      tags: ['Carriers'],
      auth: { scopes: ['epcis:capture', 'production:create'] },
      idempotency: 'recommended',
      bodyLimit: BODY_LIMIT,
      request: { body: PrintStatusBody },
      responses: { 200: { description: 'What the report changed and queued', schema: PrintStatusResponse } },
      handler: async ({ principal, body, correlationId, log }) => {
        const scope = batchKeyScope(principal.tenant.id, body.results);
        const batchKey = operationKey(scope, { ttlHours: deps.idempotencyTtlHours, now }, printStatusReply);
        const { answer, replayed } = await reportPrintStatus(
          { db, now },
          { tenantId: principal.tenant.id, correlationId, log },
          body.results,
          batchKey,
        );
        const reply = printStatusReply.toReply(answer);
        return replayed ? { ...reply, headers: { 'Idempotent-Replayed': 'true' } } : reply;
      },
    }),
  ];
}
