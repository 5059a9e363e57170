/**
 * A node:http handler in front of Express for the two hottest public operations: a resolver redirect or a
 * public passport read whose answer is in the cache (public/cache.ts) is sent from here, with everything
 * the Express chain adds to it (security headers, correlation id, public CORS headers, the client's
 * `public` IP budget and its X-RateLimit-* headers, the request log line, the request metrics), without
 * Express's router walking every route before it. Anything else (a miss, another route, a spent budget)
 * goes to Express untouched, and the Express route fills the cache, so the answer sent here is always one
 * Express produced for the same key (fast-path.test.ts compares the two byte for byte).
 *
 * The profile of this path under load (bench/passports.bench.ts) is dominated by the socket write; the
 * rest is kept to what the answer needs: the peer's trust (TRUST_PROXY) is decided once per connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Express, Request } from 'express';
import type { Metrics } from '../health/index.js';
import {
  CORRELATION_HEADER,
  clientAddress,
  correlationIdOf,
  ipBudgetKey,
  rateHeaderValues,
  securityHeaderValues,
  type IpLimiter,
} from '../http/index.js';
import type { Logger } from '../logging/logger.js';
import { answerKey, type CachedAnswer, type PublicAnswerCache } from './cache.js';
import { PUBLIC_CORS_HEADERS } from './cors.js';

export interface FastPathDeps {
  /** The Express app behind: its `trust proxy` decides what X-Forwarded-* headers are believed. */
  app: Express;
  cache: PublicAnswerCache;
  ipLimiter: IpLimiter;
  metrics: Metrics;
  log: Logger;
  production: boolean;
}

/** The paths the cache may hold (a cheap test before any work; the cache key decides the rest). */
const CACHED_PREFIXES = ['/01/', '/api/v2/public/passport/'];

type TrustFn = (address: string, hop: number) => boolean;

/** Returns a handler that answers from the cache and says whether it did. */
export function publicFastPath(deps: FastPathDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { app, cache, ipLimiter, metrics, log } = deps;
  const trust = app.get('trust proxy fn') as TrustFn;
  // Whether a connection's peer is a trusted proxy: its address does not change while it is open.
  const trustedPeers = new WeakMap<Socket, boolean>();
  // Per answer, the headers every request sends alike (security, CORS, the answer's own, its length).
  const fixed = new WeakMap<CachedAnswer, { get: string[]; head: string[] }>();
  const fixedHeaders = (answer: CachedAnswer) => {
    let f = fixed.get(answer);
    if (!f) {
      const common = Object.entries({
        ...securityHeaderValues({ production: deps.production }),
        ...PUBLIC_CORS_HEADERS,
        ...answer.headers,
      }).flat();
      // As res.json sets it; an empty answer gets Content-Length: 0 from node, except for HEAD.
      const length = String(answer.bytes?.length ?? 0);
      f = {
        get: [...common, 'Content-Length', length],
        head: answer.bytes ? [...common, 'Content-Length', length] : common,
      };
      fixed.set(answer, f);
    }
    return f;
  };

  return (req, res) => {
    const method = req.method;
    if (!cache.enabled || (method !== 'GET' && method !== 'HEAD')) return false;
    const url = req.url ?? '';
    if (!CACHED_PREFIXES.some((p) => url.startsWith(p))) return false;
    const started = process.hrtime.bigint();
    const socket = req.socket;
    const peer = socket.remoteAddress;
    if (peer === undefined) return false;
    let trusted = trustedPeers.get(socket);
    if (trusted === undefined) {
      trusted = trust(peer, 0);
      trustedPeers.set(socket, trusted);
    }
    // The origin as requestOrigin() reads it through Express (req.protocol honours X-Forwarded-Proto
    // from a trusted peer; the host is the Host header).
    let protocol = (socket as TLSSocket).encrypted ? 'https' : 'http';
    const forwardedProto = req.headers['x-forwarded-proto'];
    if (trusted && typeof forwardedProto === 'string' && forwardedProto !== '') {
      const comma = forwardedProto.indexOf(',');
      protocol = (comma < 0 ? forwardedProto : forwardedProto.slice(0, comma)).trim();
    }
    const answer = cache.get(
      answerKey(`${protocol}://${req.headers.host ?? 'localhost'}`, url, req.headers.accept),
    );
    if (!answer) return false;
    // The client as Express's req.ip names it: without X-Forwarded-For from a trusted peer, the peer.
    let address = peer;
    if (trusted && req.headers['x-forwarded-for'] !== undefined) {
      Object.setPrototypeOf(req, app.request);
      address = clientAddress(req as Request);
    }
    // A spent budget is refused by Express (429 and its headers); a refused take counts nothing.
    const budget = ipLimiter.take(ipBudgetKey('public', address), 'public');
    if (!budget.allowed) return false;
    const given = req.headers['x-correlation-id'];
    const correlationId = correlationIdOf(typeof given === 'string' ? given : undefined);
    const rate = rateHeaderValues(budget);
    const f = fixedHeaders(answer);
    res.writeHead(answer.status, [
      ...(method === 'HEAD' ? f.head : f.get),
      CORRELATION_HEADER,
      correlationId,
      'X-RateLimit-Limit',
      rate['X-RateLimit-Limit']!,
      'X-RateLimit-Remaining',
      rate['X-RateLimit-Remaining']!,
      'X-RateLimit-Reset',
      rate['X-RateLimit-Reset']!,
    ]);
    if (method === 'HEAD' || answer.bytes === undefined) res.end();
    else res.end(answer.bytes);
    // What requestLog and the metrics middleware record for a request Express answered.
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = answer.route;
    const status = answer.status;
    metrics.httpRequests.inc({ method, route, status: String(status) });
    metrics.httpDuration.observe({ method, route }, seconds);
    if (log.isLevelEnabled('info')) {
      const q = url.indexOf('?');
      log.info(
        {
          module: 'http',
          correlationId,
          method,
          route,
          path: q < 0 ? url : url.slice(0, q),
          status,
          ms: seconds * 1000,
        },
        'request',
      );
    }
    return true;
  };
}
