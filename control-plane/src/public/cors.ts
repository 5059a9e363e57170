import type { RequestHandler, Response } from 'express';
import { ApiError, errorReply, sendReply } from '../http/index.js';

/**
 * Paths anyone may read from any origin: the resolver, the public passport, the page, the description, the
 * security advisory feed and its documents, label proofs, and what proofs are verified against: the signing key
 * history, device statements and the transparency log's tree heads and consistency proofs.
 */
const PUBLIC_PATHS = [
  /^\/01\/[^/]+\/21\/[^/]+\/?$/,
  /^\/api\/v2\/public\/passport\/[^/]+\/?$/,
  /^\/p\/[^/]+\/?$/,
  /^\/\.well-known\/gs1resolver\/?$/,
  /^\/api\/v2\/public\/companies\/[^/]+\/security-advisories(?:\/[^/]+)?\/?$/,
  /^\/api\/v2\/public\/signing-keys\/?$/,
  /^\/api\/v2\/public\/devices\/[^/]+\/statement\/?$/,
  /^\/api\/v2\/public\/labels\/[^/]+\/[^/]+\/proof\/?$/,
  /^\/api\/v2\/public\/log\/(?:tree-head|consistency)\/?$/,
];

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.some((p) => p.test(path));
}

/** The CORS headers every answer of a public path carries. */
export const PUBLIC_CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'Link, Location, X-DPP-Gone-Reason, Content-Type, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
};

function setPublicCorsHeaders(res: Response): void {
  for (const [name, value] of Object.entries(PUBLIC_CORS_HEADERS)) res.setHeader(name, value);
}

const RESOLVER_PATH = /^\/01\/([^/]+)\/21\/([^/]+)\/?$/;

/**
 * The router percent-decodes path parameters before any handler runs, and a malformed escape there
 * (`/01/.../21/A%2`) would surface as a fault. On a resolver path it is a bad serial (400
 * INVALID_SERIAL); on the passport routes an id that cannot exist (404 PASSPORT_NOT_FOUND).
 */
function undecodable(path: string): ApiError | undefined {
  try {
    decodeURIComponent(path);
    return undefined;
  } catch {
    return RESOLVER_PATH.test(path)
      ? new ApiError('INVALID_SERIAL', 'The serial segment has a malformed percent-escape', {
          details: { path },
        })
      : new ApiError('PASSPORT_NOT_FOUND', 'No passport is published under this id');
  }
}

/**
 * CORS for the public routes (GS1 Digital Link 1.1 §7: a conformant resolver SHALL support CORS and
 * OPTIONS): every answer, errors included, allows any origin and exposes the headers a scanner app
 * reads (Link, Location, X-DPP-Gone-Reason) and the rate-limit ones (Retry-After, X-RateLimit-*); an OPTIONS
 * request (a preflight or not) is answered here
 * with 204. No credentials are involved: the routes are public. A public path that cannot be
 * percent-decoded is answered here (see `undecodable`).
 */
export function publicCors(): RequestHandler {
  return (req, res, next) => {
    if (!isPublicPath(req.path)) return next();
    setPublicCorsHeaders(res);
    if (req.method !== 'OPTIONS') {
      const err = undecodable(req.path);
      if (!err) return next();
      void sendReply(res, errorReply(err));
      return;
    }
    res.setHeader('Allow', 'GET, HEAD, OPTIONS');
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
    res.setHeader(
      'Access-Control-Allow-Headers',
      req.get('access-control-request-headers') ?? 'Accept, Accept-Language',
    );
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
  };
}
