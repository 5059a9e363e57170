import { Readable } from 'node:stream';
import type { Request } from 'express';
import { z } from 'zod';
import { buildDigitalLink, isValidGs1Serial } from '@dpp/shared';
import { ApiError, toApiError, publicRoute, type Reply, type RouteDef } from '../http/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import {
  PUBLIC_PASSPORT_ROUTE,
  RESOLVER_ROUTE,
  UID_MAX_LENGTH,
  passportAnswer,
  resolverAnswer,
  wantsErrorPage,
  type PublicAnswerDeps,
} from './answers.js';
import { answerKey } from './cache.js';
import { findServed } from './find.js';
import { itemInHand, type Candidate } from './lookup.js';
import { PAGE_HEADERS, notServedPage, passportPage, type PageItem } from './page.js';
import { LINKSET_TYPE, rawQuery, requestOrigin, resolverDescription, resolverRequest } from './resolver.js';
import { publicPassport } from './view.js';

export interface PublicRouteDeps extends PublicAnswerDeps {
  registry: SchemaRegistry;
}

const keyOf = (req: Request) => answerKey(requestOrigin(req), req.originalUrl, req.get('accept'));

const UidParam = z.object({ uid: z.string().min(1).max(UID_MAX_LENGTH) });
const KeyParams = z.object({ gtin: z.string(), serial: z.string() });
const Loose = z.record(z.string(), z.unknown());

const PublicPassportSchema = z
  .object({
    passportUid: z.uuid(),
    state: z
      .string()
      .meta({ description: 'Command state: draft or published (active), suspended, archived' }),
    notice: z.string().nullable(),
    publisher: z.object({ name: z.string(), issuer: z.string().nullable() }),
    digitalLink: z.string(),
    registered: z.boolean(),
    version: Loose,
    sections: Loose.meta({ description: 'Public sections only' }),
    proofs: Loose.meta({ description: 'Per shown section, its Merkle path to version.merkleRoot' }),
    disclosure: z.object({ tier: z.literal('public'), withheldSections: z.number().int() }),
    algorithms: z.object({ hash: z.string(), merkle: z.string() }),
    links: Loose,
    marketStatus: z
      .object({
        status: z.enum(['placed_on_market', 'withdrawn', 'recalled']),
        since: z.iso.datetime(),
        reason: z.string().nullable(),
      })
      .nullable()
      .meta({ description: "The item's market status as its publisher recorded it; null when none was" }),
  })
  .meta({ id: 'PublicPassport' });

const html = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  stream: Readable.from([body]),
  contentType: 'text/html; charset=utf-8',
  headers: {
    ...PAGE_HEADERS,
    'Cache-Control': status === 200 ? 'public, max-age=60' : 'no-store',
    ...headers,
  },
});

/**
 * The item in hand on the page: the query's `serial` (the resolver puts the scanned one last), or an item
 * passport's own serial; undefined when the serial does not belong to the product (anyone can type a URL).
 */
async function itemOfPage(deps: PublicRouteDeps, req: Request, c: Candidate): Promise<PageItem | undefined> {
  const asked = new URLSearchParams(rawQuery(req)).getAll('serial').at(-1);
  const serial = asked ?? (c.granularity === 'item' ? c.serial : undefined);
  if (serial === undefined || !isValidGs1Serial(serial)) return undefined;
  const item = await itemInHand(deps.db, c.productId, serial);
  return item && { ...item, digitalLink: buildDigitalLink(deps.publicBaseUrl, item.gtin, item.serial) };
}

/** The public, unauthenticated operations: public passport, consumer page, GS1 resolver. */
export function publicRoutes(deps: PublicRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    publicRoute({
      method: 'get',
      path: PUBLIC_PASSPORT_ROUTE,
      operationId: 'getPublicPassport',
      summary: 'A published passport, public content only',
      description:
        'No credential. uid is the passport uid (the product id) or the GS1 element string 01<gtin14>21<serial>. 200 for a ' +
        'passport served publicly (a published version, command state draft, published, suspended or archived, published to ' +
        'the public): its public sections only, each with its Merkle path. 404 PASSPORT_NOT_FOUND when never published, under ' +
        'review (submitted, approved: the SUBMIT-on-published hazard), published to partners or internally, or unknown; 404 ' +
        'PASSPORT_AMBIGUOUS when a code matches more than one published passport; 410 PASSPORT_GONE when voided ' +
        '(X-DPP-Gone-Reason serial_voided for an item, passport_voided for a model or batch passport or a revoked one; Link ' +
        'rel="successor-version" when a successor was recorded) or recycled (no reason header).',
      tags: ['Public'],
      auth: 'none',
      request: { params: UidParam },
      responses: { 200: { description: 'The public passport', schema: PublicPassportSchema } },
      errors: ['PASSPORT_NOT_FOUND', 'PASSPORT_AMBIGUOUS', 'PASSPORT_GONE'],
      handler: async ({ params, req }) => passportAnswer(deps, keyOf(req), params.uid),
    }),
    publicRoute({
      method: 'get',
      path: '/p/{uid}',
      operationId: 'getPassportPage',
      summary: 'The consumer page of a passport (the resolver redirects here)',
      description:
        'HTML for a browser (readable on a phone, no script); serial (the resolver adds the scanned one) names the item in ' +
        "hand: shown with its label's verification and a link to its proof only when the serial is the product's own or " +
        'one allocated to it, else the page names no serial. With Accept: application/json the same JSON, statuses and ' +
        'headers as GET /api/v2/public/passport/{uid}. Errors are pages with the same status (404, 410 with the reason and a ' +
        'link to the successor).',
      tags: ['Public'],
      auth: 'none',
      request: { params: UidParam },
      responses: {
        200: { description: 'The page, or the public passport as JSON', contentType: 'text/html' },
      },
      errors: ['PASSPORT_NOT_FOUND', 'PASSPORT_AMBIGUOUS', 'PASSPORT_GONE'],
      handler: async ({ params, req }) => {
        const wantsJson = req.accepts(['text/html', 'application/json']) === 'application/json';
        try {
          const c = await findServed(db, params.uid, wantsJson ? '/api/v2/public/passport/' : '/p/');
          const p = await publicPassport(db, c, deps.publicBaseUrl);
          if (wantsJson)
            return {
              status: 200,
              body: p,
              headers: { Vary: 'Accept', 'Cache-Control': 'public, max-age=60' },
            };
          return html(200, passportPage(p, deps.registry, await itemOfPage(deps, req, c)));
        } catch (err) {
          if (wantsJson) {
            if (err instanceof ApiError) Object.assign(err, { headers: { ...err.headers, Vary: 'Accept' } });
            throw err;
          }
          const e = toApiError(err);
          if (e.status >= 500) throw err;
          const successor = typeof e.details?.successorId === 'string' ? e.details.successorId : null;
          return html(
            e.status,
            notServedPage(e.status, e.message, e.headers['X-DPP-Gone-Reason'] ?? null, successor),
            e.headers,
          );
        }
      },
    }),
    publicRoute({
      method: 'get',
      path: RESOLVER_ROUTE,
      operationId: 'resolveDigitalLink',
      summary: 'GS1 Digital Link resolver: 302 to /p/{uid}?serial={serial}',
      description:
        'No credential. GET, HEAD and OPTIONS (CORS). GTIN-8/12/13 are padded to 14 digits; a trailing slash is tolerated; the ' +
        'query string is carried through the redirect, which adds serial (the scanned one, replacing any given). ' +
        'linkType=all or linkType=linkset, or Accept: application/linkset+json, answers the RFC 9264 linkset ' +
        '(application/linkset+json); every answer has a Link header to it. A label the print floor sealed also offers its ' +
        'proof, rel https://gs1.org/voc/certificationInfo to /api/v2/public/labels/{gtin}/{serial}/proof, where ' +
        'linkType=gs1:certificationInfo redirects. The key matches a ' +
        "product's own GTIN and serial, or a serial allocated to it by the print loop, in any tenant; only items whose Digital " +
        'Link was registered (publish-dpp) resolve. 400 INVALID_GTIN, 400 INVALID_SERIAL, 404 PRODUCT_NOT_FOUND (no product ' +
        'carries the GTIN), 404 PASSPORT_NOT_FOUND (known GTIN, nothing published and registered for the item), 404 ' +
        'PASSPORT_AMBIGUOUS, 410 SERIAL_VOIDED with a tombstone and no passport content. Errors are JSON, or a page with ' +
        'the same status for a browser (Accept preferring text/html).',
      tags: ['Public'],
      auth: 'none',
      request: { params: KeyParams },
      responses: {
        302: {
          description: "Redirect to the consumer page /p/{uid}?serial={serial}, or to the label's proof",
          headers: { Location: '/p/{uid}?serial={serial}' },
        },
        200: {
          description: 'The linkset (linkType=all or linkset)',
          schema: Loose,
          contentType: LINKSET_TYPE,
        },
      },
      errors: [
        'INVALID_GTIN',
        'INVALID_SERIAL',
        'PRODUCT_NOT_FOUND',
        'PASSPORT_NOT_FOUND',
        'PASSPORT_AMBIGUOUS',
        'SERIAL_VOIDED',
      ],
      handler: async ({ req, params }) => {
        const outcome = await resolverAnswer(deps, keyOf(req), resolverRequest(req, params.gtin));
        if ('answer' in outcome) return outcome.answer;
        const err = outcome.error;
        // A page with the same status and headers for a browser; JSON (the error handler's) for the rest.
        const e = toApiError(err);
        if (e.status >= 500 || !wantsErrorPage(req)) throw err;
        const successor = typeof e.details?.successorId === 'string' ? e.details.successorId : null;
        return html(
          e.status,
          notServedPage(e.status, e.message, e.headers['X-DPP-Gone-Reason'] ?? null, successor),
          e.headers,
        );
      },
    }),
    publicRoute({
      method: 'get',
      path: '/.well-known/gs1resolver',
      operationId: 'getResolverDescription',
      summary: 'The GS1 resolver description file',
      tags: ['Public'],
      auth: 'none',
      responses: { 200: { description: 'The description', schema: Loose } },
      handler: async ({ req }) => ({
        status: 200,
        body: resolverDescription(requestOrigin(req)),
        headers: { 'Cache-Control': 'public, max-age=3600' },
      }),
    }),
  ];
}
