/**
 * A node:http handler in front of Express for the two hottest public operations: a resolver redirect or a
 * public passport read whose answer is in the cache (public/cache.ts) is sent from here, through the same
 * edge middleware as every request (security headers, correlation id, request log, metrics), the public
 * CORS headers and the client's `public` IP budget, without Express's router walking every route before
 * it. Anything else (a miss, another route, a spent budget) goes to Express untouched, and the Express
 * route fills the cache, so the answer sent here is always one Express produced for the same key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import { clientAddress, ipRateLimit, type IpLimiter } from '../http/index.js';
import { answerKey, type PublicAnswerCache } from './cache.js';
import { setPublicCorsHeaders } from './cors.js';
import { requestOrigin } from './resolver.js';

export interface FastPathDeps {
  app: Express;
  cache: PublicAnswerCache;
  ipLimiter: IpLimiter;
  /**
   * The app's global middleware before routing, in its order. Each must only decorate the request and
   * response and call `next()` synchronously (security headers, correlation id, request log, metrics).
   */
  edge: readonly RequestHandler[];
  now: () => number;
}

/** The paths the cache may hold (a cheap test before any work; the cache key decides the rest). */
const CACHED_PREFIXES = ['/01/', '/api/v2/public/passport/'];

const noop = () => undefined;

/** Returns a handler that answers from the cache and says whether it did. */
export function publicFastPath(deps: FastPathDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { app, cache, ipLimiter, edge } = deps;
  const takeBudget = ipRateLimit(ipLimiter, 'public', deps.now);
  return (raw, rawRes) => {
    if (!cache.enabled || (raw.method !== 'GET' && raw.method !== 'HEAD')) return false;
    const url = raw.url ?? '';
    if (!CACHED_PREFIXES.some((p) => url.startsWith(p))) return false;
    // Express's request, as app.handle makes it: req.ip and req.protocol honour TRUST_PROXY the same way.
    Object.setPrototypeOf(raw, app.request);
    const req = raw as Request;
    const res = rawRes as Response;
    req.originalUrl = url;
    const answer = cache.get(answerKey(requestOrigin(req), url, req.headers.accept));
    if (!answer) return false;
    // A spent budget is refused by Express (429 and its headers), which counts the attempt itself.
    if (!ipLimiter.exhausted(`ip:public:${clientAddress(req)}`, 'public').allowed) return false;
    for (const m of edge) m(req, res, noop);
    setPublicCorsHeaders(res);
    req.routePath = answer.route;
    takeBudget(req, res, noop);
    for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
    res.statusCode = answer.status;
    if (answer.body === undefined) {
      res.end();
    } else {
      res.setHeader('Content-Length', String(answer.body.length));
      if (req.method === 'HEAD') res.end();
      else res.end(answer.body);
    }
    return true;
  };
}
