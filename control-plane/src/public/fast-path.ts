/**
 * A node:http handler in front of Express for the two hottest public operations, a resolver redirect and a
 * public passport read: it answers them itself, whether the answer is in the public answer cache
 * (public/cache.ts) or is looked up now, with everything the Express chain adds to it (security headers,
 * correlation id, public CORS headers, the client's `public` IP budget and its X-RateLimit-* headers, the
 * request log line, the request metrics), without Express's router walking every route before it. The
 * answer is the one the Express route sends: both take it from public/answers.ts, and a lookup here fills
 * the cache when it is on (fast-path.test.ts compares the two byte for byte, hits and misses).
 *
 * What it hands to Express untouched, because Express answers it differently or decides more than the
 * answer's key: any other route or method; a client whose budget is spent (the 429, without a lookup); a
 * request with a credential (checked even on a public route) or a conditional GET (res.send may answer
 * 304); a URL Express would split or decode otherwise (a malformed percent-escape, an over-long uid); a
 * resolver error for a browser (a page); and any fault (the error handler's 500 and its log line).
 *
 * A miss is mostly the lookup (store/direct-reads.ts runs its prepared statements straight on the
 * driver) and the socket write; the rest is kept to what the answer needs: the peer's trust
 * (TRUST_PROXY) is decided once per connection, a body is serialised once.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Express, Request } from 'express';
import type { Metrics } from '../health/index.js';
import {
  ApiError,
  CORRELATION_HEADER,
  clientAddress,
  correlationIdOf,
  ipBudgetKey,
  rateHeaderValues,
  securityHeaderValues,
  type IpLimiter,
} from '../http/index.js';
import type { Logger } from '../logging/logger.js';
import {
  PUBLIC_PASSPORT_ROUTE,
  RESOLVER_ROUTE,
  UID_MAX_LENGTH,
  errorAnswer,
  passportAnswer,
  resolverAnswer,
  wantsErrorPage,
  type PublicAnswerDeps,
} from './answers.js';
import { answerKey, type CachedAnswer } from './cache.js';
import { PUBLIC_CORS_HEADERS } from './cors.js';

export interface FastPathDeps {
  /**
   * The Express app behind: it answers what this handler does not, and its `trust proxy` decides which
   * X-Forwarded-* headers are believed.
   */
  app: Express;
  answers: PublicAnswerDeps;
  ipLimiter: IpLimiter;
  metrics: Metrics;
  log: Logger;
  production: boolean;
}

/** The two routes as Express matches them (case-sensitive, a trailing slash tolerated). */
const RESOLVER_PATH = /^\/01\/([^/]+)\/21\/[^/]+\/?$/;
const PASSPORT_PATH = /^\/api\/v2\/public\/passport\/([^/]+)\/?$/;
/** Characters with which parseurl (Express's req.path) no longer cuts the URL at its first `?` alone. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * Requests whose answer depends on more than the key: a credential, which Express checks even on a public
 * route, and a conditional GET, which res.send may answer 304 (If-None-Match: *).
 */
const decidedByExpress = (h: IncomingHttpHeaders) =>
  h.authorization !== undefined || h['x-api-key'] !== undefined || h['if-none-match'] !== undefined;

type TrustFn = (address: string, hop: number) => boolean;

/** The operation a request asks for, with its path segment percent-decoded as the router does. */
type Operation =
  { route: typeof RESOLVER_ROUTE; gtin: string } | { route: typeof PUBLIC_PASSPORT_ROUTE; uid: string };

function operationOf(path: string): Operation | undefined {
  try {
    const resolver = RESOLVER_PATH.exec(path);
    if (resolver) return { route: RESOLVER_ROUTE, gtin: decodeURIComponent(resolver[1]!) };
    const passport = PASSPORT_PATH.exec(path);
    if (passport) {
      const uid = decodeURIComponent(passport[1]!);
      return uid.length <= UID_MAX_LENGTH ? { route: PUBLIC_PASSPORT_ROUTE, uid } : undefined;
    }
  } catch {
    // A malformed percent-escape: publicCors answers it.
  }
  return undefined;
}

/** Returns the server's request handler: the two public operations answered here, the rest by Express. */
export function publicFastPath(deps: FastPathDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, answers, ipLimiter, metrics, log } = deps;
  const { cache } = answers;
  const trust = app.get('trust proxy fn') as TrustFn;
  // Whether a connection's peer is a trusted proxy: its address does not change while it is open.
  const trustedPeers = new WeakMap<Socket, boolean>();
  const everyAnswer = Object.entries({
    ...securityHeaderValues({ production: deps.production }),
    ...PUBLIC_CORS_HEADERS,
  }).flat();
  /**
   * The headers every request of an answer sends alike (security, CORS, the answer's own, its length), in
   * a new array the per-request headers are added to.
   */
  const headersOf = (answer: CachedAnswer, head: boolean): string[] => {
    const headers = everyAnswer.slice();
    const own = answer.headers;
    for (const name in own) headers.push(name, own[name]!);
    // As res.send sets it; an empty answer gets Content-Length: 0 from node, except for HEAD.
    if (answer.bytes || !head) headers.push('Content-Length', String(answer.bytes?.length ?? 0));
    return headers;
  };
  // Per answer from the cache, its fixed headers: an answer looked up now is sent once, and builds them once.
  const fixed = new WeakMap<CachedAnswer, { get: string[]; head: string[] }>();
  const fixedHeaders = (answer: CachedAnswer, head: boolean) => {
    let f = fixed.get(answer);
    if (!f) {
      f = { get: headersOf(answer, false), head: headersOf(answer, true) };
      fixed.set(answer, f);
    }
    return (head ? f.head : f.get).slice();
  };

  /** Sends an answer on the client's budget; false when the budget is spent (Express answers the 429). */
  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    answer: CachedAnswer,
    fromCache: boolean,
    budgetKey: string,
    started: bigint,
  ): boolean => {
    // A refused take counts nothing, so Express's own take refuses the same way.
    const budget = ipLimiter.take(budgetKey, 'public');
    if (!budget.allowed) return false;
    const method = req.method!;
    const given = req.headers['x-correlation-id'];
    const correlationId = correlationIdOf(typeof given === 'string' ? given : undefined);
    const rate = rateHeaderValues(budget);
    const head = method === 'HEAD';
    const headers = fromCache ? fixedHeaders(answer, head) : headersOf(answer, head);
    headers.push(
      CORRELATION_HEADER,
      correlationId,
      'X-RateLimit-Limit',
      rate['X-RateLimit-Limit']!,
      'X-RateLimit-Remaining',
      rate['X-RateLimit-Remaining']!,
      'X-RateLimit-Reset',
      rate['X-RateLimit-Reset']!,
    );
    res.writeHead(answer.status, headers);
    if (head || answer.bytes === undefined) res.end();
    else res.end(answer.bytes);
    // What requestLog and the metrics middleware record for a request Express answered.
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { route, status } = answer;
    metrics.httpRequests.inc({ method, route, status: String(status) });
    metrics.httpDuration.observe({ method, route }, seconds);
    if (log.isLevelEnabled('info')) {
      const url = req.url!;
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

  /** The answer of a lookup, or undefined when Express answers it (a page, a fault). */
  const lookUp = async (
    req: IncomingMessage,
    operation: Operation,
    key: string,
    origin: string,
    path: string,
    query: string,
  ): Promise<CachedAnswer | undefined> => {
    if (operation.route === PUBLIC_PASSPORT_ROUTE) {
      try {
        return await passportAnswer(answers, key, operation.uid);
      } catch (err) {
        return err instanceof ApiError && err.status < 500 ? errorAnswer(err, operation.route) : undefined;
      }
    }
    const accept = req.headers.accept;
    const outcome = await resolverAnswer(answers, key, {
      origin,
      path,
      query,
      gtinSegment: operation.gtin,
      accept,
    });
    if ('answer' in outcome) return outcome.answer;
    const err = outcome.error;
    if (!(err instanceof ApiError) || err.status >= 500) return undefined;
    // Without Accept, req.accepts names the first type offered (JSON): no page, and no Express request needed.
    if (accept !== undefined) {
      Object.setPrototypeOf(req, app.request);
      if (wantsErrorPage(req as Request)) return undefined;
    }
    return errorAnswer(err, operation.route);
  };

  const answerMiss = async (
    req: IncomingMessage,
    res: ServerResponse,
    operation: Operation,
    key: string,
    origin: string,
    path: string,
    query: string,
    budgetKey: string,
    started: bigint,
  ): Promise<void> => {
    try {
      const answer = await lookUp(req, operation, key, origin, path, query);
      if (answer && send(req, res, answer, false, budgetKey, started)) return;
    } catch (err) {
      log.error({ err, module: 'http' }, 'public fast path failed; Express answers');
      if (res.headersSent) return void res.destroy();
    }
    app(req, res);
  };

  return (req, res) => {
    const method = req.method;
    const url = req.url ?? '';
    if (
      (method !== 'GET' && method !== 'HEAD') ||
      !(url.startsWith('/01/') || url.startsWith('/api/v2/public/passport/'))
    )
      return void app(req, res);
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const operation = operationOf(path);
    const socket = req.socket;
    const peer = socket.remoteAddress;
    if (!operation || peer === undefined || UNUSUAL_URL.test(url) || decidedByExpress(req.headers))
      return void app(req, res);
    const started = process.hrtime.bigint();
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
    const origin = `${protocol}://${req.headers.host ?? 'localhost'}`;
    const key = answerKey(origin, url, req.headers.accept);
    // The client as Express's req.ip names it: without X-Forwarded-For from a trusted peer, the peer.
    let address = peer;
    if (trusted && req.headers['x-forwarded-for'] !== undefined) {
      Object.setPrototypeOf(req, app.request);
      address = clientAddress(req as Request);
    }
    const budgetKey = ipBudgetKey('public', address);
    const hit = cache.get(key);
    if (hit) {
      if (!send(req, res, hit, true, budgetKey, started)) app(req, res);
      return;
    }
    // A client whose budget is spent costs no lookup: Express refuses it.
    if (!ipLimiter.exhausted(budgetKey, 'public').allowed) return void app(req, res);
    void answerMiss(
      req,
      res,
      operation,
      key,
      origin,
      path,
      q < 0 ? '' : url.slice(q + 1),
      budgetKey,
      started,
    );
  };
}
