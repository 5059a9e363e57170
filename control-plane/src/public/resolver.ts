/**
 * The GS1 Digital Link resolver on the control plane's origin: /01/{gtin}/21/{serial}.
 *
 * GS1 Digital Link 1.1 §7 (GS1-conformant resolver) points a scanner app relies on: GET and HEAD (and
 * OPTIONS with CORS, public/cors.ts); GTIN-8/12/13 keys padded to 14 digits; a trailing slash tolerated;
 * syntax errors are 400; the query string is passed through the redirect; linkType=all or linkset (or
 * Accept: application/linkset+json) answers the RFC 9264 linkset as application/linkset+json; every
 * answer carries a Link header to the linkset; /.well-known/gs1resolver describes the resolver.
 *
 * The redirect names the scanned serial (`serial=`) so the page is about the item in hand, and a label
 * the print floor sealed offers its proof as gs1:certificationInfo (docs/label-proof.md).
 */
import type { Request } from 'express';
import { CodecError, digitalLinkPath, isValidGtin, parseDigitalLinkPath } from '@dpp/shared';
import { ApiError, type JsonReply } from '../http/index.js';
import type { Db } from '../store/index.js';
import { ambiguous } from './find.js';
import { resolveKey, type ItemCandidate } from './lookup.js';
import { labelProofPath, successorLink } from './view.js';

export const GS1_VOC = 'https://gs1.org/voc/';
export const LINKSET_TYPE = 'application/linkset+json';

/** The scheme and host the request came to (behind a proxy on loopback, its X-Forwarded-* headers). */
export function requestOrigin(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** The raw query string, without its `?` ('' when none). */
export function rawQuery(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i + 1);
}

/** Parses the key of a resolver path; a bad GTIN is INVALID_GTIN, anything else about it INVALID_SERIAL. */
export function parseKey(path: string, gtinSegment: string): { gtin: string; serial: string } {
  if (!isValidGtin(gtinSegment)) {
    throw new ApiError(
      'INVALID_GTIN',
      `${gtinSegment} is not a valid GTIN (8, 12, 13 or 14 digits with a correct check digit)`,
      {
        details: { gtin: gtinSegment },
      },
    );
  }
  try {
    return parseDigitalLinkPath(path);
  } catch (err) {
    if (err instanceof CodecError && err.code === 'INVALID_GTIN') {
      throw new ApiError('INVALID_GTIN', err.message, { details: { gtin: gtinSegment } });
    }
    throw new ApiError('INVALID_SERIAL', err instanceof Error ? err.message : 'invalid serial', {
      details: { maxLength: 20, charset: 'GS1 AI encodable character set 82' },
    });
  }
}

interface Link {
  href: string;
  title: string;
  type: string;
  hreflang?: string[];
}

/** What the links are about: the scanned GTIN + serial, its passport, and whether its label was sealed. */
interface Resolved {
  gtin: string;
  serial: string;
  candidate: ItemCandidate;
  sealed: boolean;
}

/**
 * The links of a resolved item: the consumer page (default link and product information page) and its
 * JSON; for a sealed label, its proof. GS1 Web Vocabulary: certificationInfo links to certification
 * information about the item, the place EPCIS 2.0 also gives the commissioning event's link to the proof.
 */
function linksOf(origin: string, r: Resolved): Record<string, Link[]> {
  const c = r.candidate;
  const page: Link = {
    // The page of the item in hand, as the redirect gives it.
    href: `${origin}/p/${c.productId}?serial=${encodeURIComponent(r.serial)}`,
    title: 'Digital Product Passport',
    type: 'text/html',
    hreflang: ['en'],
  };
  const json: Link = {
    href: `${origin}/api/v2/public/passport/${c.productId}`,
    title: 'Digital Product Passport (JSON)',
    type: 'application/json',
  };
  const links: Record<string, Link[]> = {
    [`${GS1_VOC}defaultLink`]: [page],
    [`${GS1_VOC}pip`]: [page, json],
  };
  if (r.sealed) {
    links[`${GS1_VOC}certificationInfo`] = [
      {
        href: `${origin}${labelProofPath(r.gtin, r.serial)}`,
        title: 'Label proof',
        type: 'application/json',
      },
    ];
  }
  return links;
}

/** RFC 9264 §4.2 JSON linkset, GS1 style: one context object anchored at the Digital Link. */
function linkset(anchor: string, origin: string, r: Resolved) {
  return { linkset: [{ anchor, ...linksOf(origin, r) }] };
}

/**
 * The Link header: the linkset, then each link of `linksOf` in its order (`<href>; rel="…"; type="…"`),
 * written out directly, since every redirect sends it (resolver.test.ts checks it against the linkset).
 */
function linkHeader(anchor: string, origin: string, r: Resolved): string {
  const id = r.candidate.productId;
  const page = `<${origin}/p/${id}?serial=${encodeURIComponent(r.serial)}>`;
  const header =
    `<${anchor}?linkType=linkset>; rel="linkset"; type="${LINKSET_TYPE}", ` +
    `${page}; rel="${GS1_VOC}defaultLink"; type="text/html", ` +
    `${page}; rel="${GS1_VOC}pip"; type="text/html", ` +
    `<${origin}/api/v2/public/passport/${id}>; rel="${GS1_VOC}pip"; type="application/json"`;
  if (!r.sealed) return header;
  return `${header}, <${origin}${labelProofPath(r.gtin, r.serial)}>; rel="${GS1_VOC}certificationInfo"; type="application/json"`;
}

function wantsLinkset(accept: string | undefined, linkType: string | null): boolean {
  if (linkType === 'all' || linkType === 'linkset') return true;
  return accept?.includes(LINKSET_TYPE) ?? false;
}

/** The page's query string: the request's, with the scanned serial last (replacing any `serial` it named). */
function pageQuery(query: string, serial: string): string {
  const kept = query.split('&').filter((part) => part !== '' && !new URLSearchParams(part).has('serial'));
  return [...kept, `serial=${encodeURIComponent(serial)}`].join('&');
}

/** The link type a linkType parameter names, `gs1:x` or the full URI. */
function linkTypeUri(linkType: string): string {
  return linkType.startsWith('gs1:') ? `${GS1_VOC}${linkType.slice(4)}` : linkType;
}

/** What the resolver's answer depends on, as Express (`resolverRequest`) or the fast path reads it. */
export interface ResolverRequest {
  /** The scheme and host the request came to (`requestOrigin`). */
  origin: string;
  /** The path as sent, still percent-encoded (the key is parsed from it). */
  path: string;
  /** The raw query string, without its `?`. */
  query: string;
  /** The GTIN path segment, percent-decoded as the router hands it over. */
  gtinSegment: string;
  accept: string | undefined;
}

/** The resolver's view of a request Express routed. */
export function resolverRequest(req: Request, gtinSegment: string): ResolverRequest {
  return {
    origin: requestOrigin(req),
    path: req.path,
    query: rawQuery(req),
    gtinSegment,
    accept: req.get('accept'),
  };
}

/** GET/HEAD /01/{gtin}/21/{serial}: a 302 to /p/{uid}?serial=…, the linkset, or the typed error. */
export async function resolve(db: Db, req: ResolverRequest): Promise<JsonReply> {
  const key = parseKey(req.path, req.gtinSegment);
  const { origin, query } = req;
  const anchor = `${origin}${digitalLinkPath(key.gtin, key.serial)}`;
  const r = await resolveKey(db, key.gtin, key.serial, { requireRegistered: true });
  switch (r.kind) {
    case 'unknown_gtin':
      throw new ApiError('PRODUCT_NOT_FOUND', `No product carries GTIN ${key.gtin}`, {
        details: { gtin: key.gtin },
      });
    case 'not_published':
      throw new ApiError('PASSPORT_NOT_FOUND', 'No passport is published for this item');
    case 'ambiguous':
      throw ambiguous();
    case 'voided':
      throw new ApiError('SERIAL_VOIDED', 'This item was voided', {
        details: {
          tombstone: {
            gtin: key.gtin,
            serial: key.serial,
            status: 'voided',
            voidedAt: r.candidate.voidedAt,
            digitalLink: anchor,
          },
          ...(r.candidate.successorId ? { successorId: r.candidate.successorId } : {}),
        },
        headers: { 'X-DPP-Gone-Reason': 'serial_voided', ...successorLink(r.candidate.successorId, '/p/') },
      });
    case 'one': {
      const { candidate: c, sealed } = r;
      const resolved: Resolved = { ...key, candidate: c, sealed };
      const link = linkHeader(anchor, origin, resolved);
      // Most scans carry no query: no parameters to parse.
      const linkType = query === '' ? null : new URLSearchParams(query).get('linkType');
      if (wantsLinkset(req.accept, linkType)) {
        return {
          status: 200,
          body: linkset(anchor, origin, resolved),
          headers: {
            'Content-Type': LINKSET_TYPE,
            Link: link,
            'Cache-Control': 'public, max-age=60',
            Vary: 'Accept',
          },
        };
      }
      // A requested link type goes to its link (GS1 Digital Link 1.1 §7): certificationInfo to the label's
      // proof when it was sealed; any other (gs1:pip, gs1:defaultLink, or one not offered) to the page.
      const proof = sealed && linkType && linkTypeUri(linkType) === `${GS1_VOC}certificationInfo`;
      return {
        status: 302,
        headers: {
          Location: proof
            ? labelProofPath(key.gtin, key.serial)
            : `/p/${c.productId}?${pageQuery(query, key.serial)}`,
          Link: link,
          'Cache-Control': 'public, max-age=60',
          Vary: 'Accept',
        },
      };
    }
  }
}

/** /.well-known/gs1resolver: the resolver description file (GS1 Digital Link 1.1 §7.10). */
export function resolverDescription(origin: string) {
  return {
    name: 'DPP control plane resolver',
    resolverRoot: origin,
    supportedPrimaryKeys: ['01'],
    supportedKeyQualifiers: { '01': ['21'] },
    supportedLinkType: [{ namespace: GS1_VOC, prefix: 'gs1:', profile: `${GS1_VOC}?show=linktypes` }],
    linkTypes: ['gs1:defaultLink', 'gs1:pip', 'gs1:certificationInfo'],
    linkTypeDefaultCanBeLinkset: false,
    linkTypeAllSupported: true,
    linksetMediaType: LINKSET_TYPE,
    supportedContextValuesEnumerated: [],
    methods: ['GET', 'HEAD', 'OPTIONS'],
  };
}
