/**
 * The one producer of each answer of the two hottest public operations, the resolver's redirect (or
 * linkset) and the public passport read, as it goes on the wire: the Express routes (public/routes.ts)
 * and the fast path in front of them (public/fast-path.ts) both send what these return, so the two never
 * differ but in how they read the request. Answers go through the public answer cache (public/cache.ts):
 * from it when fresh, into it when it is on and the answer depends on nothing but its key.
 */
import type { Request } from 'express';
import { errorReply, type ApiError } from '../http/index.js';
import type { Db } from '../store/index.js';
import { cachedAnswer, jsonAnswer, labelKey, type CachedAnswer, type PublicAnswerCache } from './cache.js';
import { findServed } from './find.js';
import { parseKey, resolve, type ResolverRequest } from './resolver.js';
import { publicPassportBytes } from './view.js';

export const PUBLIC_PASSPORT_ROUTE = '/api/v2/public/passport/{uid}';
export const RESOLVER_ROUTE = '/01/{gtin}/21/{serial}';

/** The longest uid the public passport route accepts (a uuid or an element string are far shorter). */
export const UID_MAX_LENGTH = 100;

export interface PublicAnswerDeps {
  db: Db;
  publicBaseUrl: string;
  cache: PublicAnswerCache;
}

const itself = (answer: CachedAnswer) => answer;

/**
 * GET /api/v2/public/passport/{uid}: 200 with the public passport. A passport not served throws its
 * typed error (404 PASSPORT_NOT_FOUND or PASSPORT_AMBIGUOUS, 410 PASSPORT_GONE), which is not kept.
 */
export function passportAnswer(deps: PublicAnswerDeps, key: string, uid: string): Promise<CachedAnswer> {
  return deps.cache.through(
    key,
    async () => {
      const c = await findServed(deps.db, uid, '/api/v2/public/passport/');
      const answer = jsonAnswer(
        { status: 200, headers: { 'Cache-Control': 'public, max-age=60' } },
        await publicPassportBytes(deps.db, c, deps.publicBaseUrl),
        PUBLIC_PASSPORT_ROUTE,
      );
      return { value: answer, answer };
    },
    itself,
  );
}

/** The label a resolver request is about (`labelKey`), or undefined when its key is not one (an error). */
function labelOf(req: ResolverRequest): string | undefined {
  try {
    return labelKey(parseKey(req.path, req.gtinSegment));
  } catch {
    return undefined;
  }
}

/**
 * GET /01/{gtin}/21/{serial}: the 302 or the linkset, or what it resolved to instead. Concurrent scans of
 * one key share one lookup, its error included; an error is not kept, since how it is answered also
 * depends on the request's Accept (`wantsErrorPage`). A kept answer goes when its label is sealed.
 */
export function resolverAnswer(
  deps: PublicAnswerDeps,
  key: string,
  req: ResolverRequest,
): Promise<{ answer: CachedAnswer } | { error: unknown }> {
  return deps.cache.through<{ answer: CachedAnswer } | { error: unknown }>(
    key,
    async () => {
      try {
        const answer = cachedAnswer(await resolve(deps.db, req), RESOLVER_ROUTE);
        return { value: { answer }, answer };
      } catch (error) {
        return { value: { error }, answer: undefined };
      }
    },
    (answer) => ({ answer }),
    () => labelOf(req),
  );
}

/** A person who scanned the label in a browser (Accept prefers HTML to JSON) gets an error as a page. */
export function wantsErrorPage(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

/** A typed error's JSON answer, as the error handler sends it (errorReply, then res.json). */
export function errorAnswer(err: ApiError, route: string): CachedAnswer {
  return cachedAnswer(errorReply(err), route);
}
