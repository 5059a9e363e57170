import { z } from 'zod';
import { ApiError, route, type RouteDef, queryInt } from '../http/index.js';
import type { Db } from '../store/index.js';
import { captureDocument, getCapture } from './capture.js';
import { EPCIS_EVENT_TYPES, EpcisDocumentSchema } from './schemas.js';
import { EPCIS_CONTEXT, queryEpcisEvents, type EventCursor } from './store.js';
import { BIZ_STEP, normaliseCbvTerm } from './vocabulary.js';

export interface EpcisRouteDeps {
  db: Db;
  now: () => number;
}

/** A capture document of 10,000 events with extension fields fits comfortably. */
const CAPTURE_BODY_LIMIT = '16mb';
const DEFAULT_PER_PAGE = 100;

const CaptureJobSchema = z
  .object({
    captureID: z.uuid(),
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    running: z.boolean(),
    success: z.boolean(),
    captureErrorBehaviour: z.literal('rollback'),
    errors: z.array(z.unknown()),
    eventCount: z.number().int(),
    storedCount: z.number().int(),
    duplicateCount: z.number().int().meta({ description: 'Events whose eventID was already stored' }),
  })
  .meta({ id: 'EpcisCaptureJob' });

const QueryDocumentSchema = z
  .object({
    '@context': z.array(z.string()),
    type: z.literal('EPCISQueryDocument'),
    schemaVersion: z.string(),
    creationDate: z.iso.datetime(),
    epcisBody: z.object({
      queryResults: z.object({
        queryName: z.string(),
        resultsBody: z.object({ eventList: z.array(z.record(z.string(), z.unknown())) }),
      }),
    }),
  })
  .meta({ id: 'EPCISQueryDocument' });

const Time = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with Z or an offset' })
  .transform((v) => new Date(v).toISOString());

const EventsQuery = z.object({
  eventType: z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(z.enum(EPCIS_EVENT_TYPES)))
    .optional()
    .meta({ description: 'Event types, comma-separated (ObjectEvent, AggregationEvent, ...)' }),
  epc: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .meta({ description: 'Events naming this EPC in epcList, childEPCs, parentID or input/output lists' }),
  bizStep: z
    .string()
    .transform((v, ctx) => {
      const term = normaliseCbvTerm(BIZ_STEP, v);
      if (term === undefined) {
        ctx.issues.push({
          code: 'custom',
          input: v,
          message: 'must be a CBV business step or a non-CBV URI',
        });
        return z.NEVER;
      }
      return term;
    })
    .optional()
    .meta({ description: 'A CBV business step (commissioning, or its CBV URI) or a user vocabulary URI' }),
  GE_eventTime: Time.optional().meta({ description: 'eventTime at or after this instant' }),
  LT_eventTime: Time.optional().meta({ description: 'eventTime before this instant' }),
  perPage: queryInt(1, 1000)
    .optional()
    .meta({ description: `Events per page (default ${DEFAULT_PER_PAGE})` }),
  nextPageToken: z
    .string()
    .max(512)
    .optional()
    .meta({ description: 'From the Link rel="next" of the previous page' }),
});

function encodeToken(c: EventCursor): string {
  return Buffer.from(JSON.stringify([c.eventTime, c.id])).toString('base64url');
}

function decodeToken(token: string): EventCursor {
  try {
    const [eventTime, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof eventTime === 'string' && typeof id === 'string') return { eventTime, id };
  } catch {
    // fall through
  }
  throw ApiError.validation('nextPageToken', 'nextPageToken: not a token this API issued');
}

/** POST /epcis/capture, GET /epcis/capture/{captureID}, GET /epcis/events. */
export function epcisRoutes(deps: EpcisRouteDeps): RouteDef[] {
  const { db, now } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/epcis/capture',
      operationId: 'captureEpcisEvents',
      summary: 'Capture an EPCIS 2.0 JSON-LD document of events',
      description:
        'Validates the EPCISDocument (the five event types, their required fields, action, ISO times with ' +
        'eventTimeZoneOffset, EPC URIs, CBV business steps and dispositions as short names or URIs) and ' +
        'stores every event for the tenant. All or nothing: an invalid event is 400 VALIDATION_ERROR naming ' +
        'its path and stores nothing. An event without eventID gets a urn:uuid one; an eventID already ' +
        'stored is skipped (duplicateCount). CBV URIs are stored as short names. Answers 202 with the ' +
        'capture job (EPCIS 2.0 capture interface); it is already finished.',
      tags: ['EPCIS'],
      auth: { scopes: ['epcis:capture'] },
      idempotency: 'recommended',
      bodyLimit: CAPTURE_BODY_LIMIT,
      request: { body: EpcisDocumentSchema },
      responses: {
        202: {
          description: 'Captured; Location names the capture job',
          schema: CaptureJobSchema,
          headers: { Location: 'The capture job, /api/v2/epcis/capture/{captureID}' },
        },
      },
      handler: async ({ principal, body, correlationId }) => {
        const job = await captureDocument(db, principal.tenant.id, body, { correlationId, now });
        return {
          status: 202,
          body: job,
          headers: { Location: `/api/v2/epcis/capture/${job.captureID}` },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/epcis/capture/{captureID}',
      operationId: 'getEpcisCapture',
      summary: 'Read a capture job',
      tags: ['EPCIS'],
      auth: { scopes: ['epcis:capture', 'epcis:query'] },
      request: { params: z.object({ captureID: z.uuid() }) },
      responses: { 200: { description: 'The capture job', schema: CaptureJobSchema } },
      handler: async ({ principal, params }) => {
        const job = await getCapture(db, principal.tenant.id, params.captureID);
        if (!job) throw ApiError.notFound('Capture');
        return { status: 200, body: job };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/epcis/events',
      operationId: 'queryEpcisEvents',
      summary: "Query the tenant's EPCIS events",
      description:
        'Captured events and those the print loop records (commissioning on a confirmed print), in ' +
        'eventTime order, as an EPCISQueryDocument (queryName SimpleEventQuery). Filters combine with AND. ' +
        'When more events match, the Link header (rel="next") holds the URL of the next page.',
      tags: ['EPCIS'],
      auth: { scopes: ['epcis:query'] },
      request: { query: EventsQuery },
      responses: {
        200: {
          description: 'The matching events',
          schema: QueryDocumentSchema,
          headers: { Link: '<next page URL>; rel="next", when more events match' },
        },
      },
      handler: async ({ principal, query, req }) => {
        const page = await queryEpcisEvents(
          db,
          principal.tenant.id,
          {
            eventTypes: query.eventType,
            epc: query.epc,
            bizStep: query.bizStep,
            fromEventTime: query.GE_eventTime,
            toEventTime: query.LT_eventTime,
          },
          {
            limit: query.perPage ?? DEFAULT_PER_PAGE,
            after: query.nextPageToken === undefined ? null : decodeToken(query.nextPageToken),
          },
        );
        const headers: Record<string, string> = {};
        if (page.next) {
          const next = new URL(req.originalUrl, 'http://localhost');
          next.searchParams.set('nextPageToken', encodeToken(page.next));
          headers.Link = `<${next.pathname}${next.search}>; rel="next"`;
        }
        return {
          status: 200,
          headers,
          body: {
            '@context': [EPCIS_CONTEXT],
            type: 'EPCISQueryDocument',
            schemaVersion: '2.0',
            creationDate: new Date(now()).toISOString(),
            epcisBody: {
              queryResults: { queryName: 'SimpleEventQuery', resultsBody: { eventList: page.events } },
            },
          },
        };
      },
    }),
  ];
}
