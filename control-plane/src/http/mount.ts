import express, { type Request, type RequestHandler, type Router } from 'express';
import { type Db, type SecretBox, firstInLine } from '../store/index.js';
import { ApiError, toApiError } from './api-error.js';
import { authenticate, resolvePrincipal } from './authenticate.js';
import { IDEMPOTENCY_HEADER, readIdempotencyKey, requestHash, runIdempotent } from './idempotency.js';
import type { Authenticator } from './principal.js';
import { verifyJsonBounds } from './json-bounds.js';
import { Precedence } from './precedence.js';
import { failedAttemptThrottle, ipRateLimit, type IpLimiter } from './ip-limit.js';
import { type RateLimiter, rateLimit } from './rate-limit.js';
import { errorReply, sendReply } from './reply.js';
import {
  type IdempotencyClaim,
  isBytesReply,
  isStreamReply,
  type JsonReply,
  type PublicEffect,
  type Reply,
  type RouteDef,
  toExpressPath,
} from './route.js';
import { requestLogger } from './request-log.js';
import { parseOrThrow } from './validate.js';

export interface MountDeps {
  db: Db;
  /** Seals the stored answers of idempotent operations (SECRETS_KEY). */
  secrets: SecretBox;
  authenticators: readonly Authenticator[];
  limiter: RateLimiter;
  /** Budgets per client IP of the operations without a credential. */
  ipLimiter: IpLimiter;
  idempotencyTtlHours: number;
  now: () => number;
  /**
   * Called after a mutating operation answered below 400, with what it may have changed of the public
   * answers (the route's `publicEffect`, else `any`): its transaction may also have queued outbox rows.
   */
  afterWrite?: (effect: PublicEffect) => void;
  /** Largest JSON body accepted, unless a route says otherwise. */
  bodyLimit?: string;
}

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Mounts operations in the order of DESIGN.md's request path:
 * auth -> rate limit -> idempotency -> zod validation -> domain handler -> one rendering of the reply.
 * Returns the handler that dispatches a request to them (a request no operation takes goes on to `next`).
 */
export function mountRoutes(routes: readonly RouteDef[], deps: MountDeps): RequestHandler {
  const mounted: Mounted[] = [];
  const jsonParser = (limit: string) =>
    express.json({ limit, type: ['application/json', 'application/*+json'], verify: verifyJsonBounds });
  const jsonBody = jsonParser(deps.bodyLimit ?? '1mb');
  const formBody = express.urlencoded({ extended: false, limit: '64kb' });
  // Deferrable operations wait for first-in-line ones, on either database (why: http/precedence.ts).
  const precedence = new Precedence();
  for (const def of routes) {
    const chain: RequestHandler[] = [
      (req, _res, next) => {
        req.routePath = def.path;
        next();
      },
    ];
    if (def.firstInLine) {
      // A response emits 'close' once it is done or its client left, whichever comes first.
      chain.push((_req, res, next) => {
        res.once('close', precedence.first());
        next();
      });
    } else if (def.deferrable) {
      chain.push((_req, res, next) => {
        let gone = false;
        const onClose = () => (gone = true);
        res.once('close', onClose);
        precedence.deferrable((end) => {
          res.off('close', onClose);
          // The client left while it waited: nothing was read, nothing is done (it sends the call again).
          if (gone) return end();
          res.once('close', end);
          next();
        });
      });
    }
    if (MUTATING.has(def.method) && !def.rawBody)
      chain.push(def.bodyLimit ? jsonParser(def.bodyLimit) : jsonBody);
    if (MUTATING.has(def.method) && def.acceptsForm) chain.push(formBody);
    // Everything after the body is read (credential check, operation) runs in the first lane. Not before:
    // the body arrives through the socket's events, which do not carry the lane.
    if (def.firstInLine) chain.push((_req, _res, next) => firstInLine(next));
    if (def.auth !== 'none') {
      chain.push(authenticate(def.auth, deps.authenticators, deps.now));
      if (def.rateLimited !== false) chain.push(rateLimit(deps.limiter, deps.now));
    } else if (def.rateLimited !== false) {
      const failed = def.ipLimit?.failedStatuses;
      if (failed) chain.unshift(failedAttemptThrottle(deps.ipLimiter, (s) => failed.includes(s), deps.now));
      chain.unshift(ipRateLimit(deps.ipLimiter, def.ipLimit?.budget ?? 'public', deps.now));
    }
    chain.push(runOperation(def, deps));
    mounted.push({ def, chain });
  }
  return dispatchByPath(mounted);
}

/** Leading path segments a request is dispatched by: `/api/v2/aidc` of `/api/v2/aidc/jobs/claims`. */
const DISPATCH_SEGMENTS = 3;

/** An operation and the handlers it was mounted with. */
interface Mounted {
  def: RouteDef;
  chain: RequestHandler[];
}

/**
 * The operations by the first segments of their paths: a request goes to a router of the operations that can
 * match a path starting with its own first segments, in the order they were mounted, instead of Express trying
 * every operation's path in turn (about 180 of them before the last ones: a device's every call paid for the
 * walk). A path whose first segments no operation's literal prefix has goes to a router of all of them, as
 * before. The operations a request's router leaves out are ones that cannot match it (their leading segments
 * differ, or they have too few segments), so which operation answers is what one router of all would choose.
 */
function dispatchByPath(mounted: readonly Mounted[]): RequestHandler {
  const router = () => express.Router({ caseSensitive: true });
  const all = router();
  const shapes = mounted.map(({ def }) => pathShape(def.path));
  const keys = new Set(
    shapes
      .filter((s) => s.literal.length >= DISPATCH_SEGMENTS)
      .map((s) => s.literal.slice(0, DISPATCH_SEGMENTS).join('/')),
  );
  const keyed = [...keys].map((key) => ({ key, segments: key.split('/'), router: router() }));
  mounted.forEach(({ def, chain }, i) => {
    const path = toExpressPath(def.path);
    all[def.method](path, ...chain);
    for (const k of keyed) if (canMatchUnder(shapes[i]!, k.segments)) k.router[def.method](path, ...chain);
  });
  const routers = new Map<string, Router>(keyed.map((k) => [k.key, k.router]));
  return (req, res, next) => {
    const key = firstSegments(req.path);
    (key === undefined ? all : (routers.get(key) ?? all))(req, res, next);
  };
}

/** A route path's segments, and those it starts with that are literal (no parameter), e.g. `/p/{uid}`: 2, `p`. */
function pathShape(path: string): { segments: number; literal: string[] } {
  const segments = path.split('/').slice(1);
  const firstParameter = segments.findIndex((s) => s.includes('{'));
  return {
    segments: segments.length,
    literal: firstParameter < 0 ? segments : segments.slice(0, firstParameter),
  };
}

/**
 * Whether a route can match a request path whose first segments are `key`: its own literal segments agree
 * with the key as far as both go, and it has at least as many segments (a parameter takes one whole segment).
 */
function canMatchUnder(shape: { segments: number; literal: string[] }, key: readonly string[]): boolean {
  if (shape.segments < key.length) return false;
  const common = Math.min(shape.literal.length, key.length);
  for (let i = 0; i < common; i++) if (shape.literal[i] !== key[i]) return false;
  return true;
}

/** The first DISPATCH_SEGMENTS segments of a request path joined by `/` (`api/v2/aidc`), if it has as many. */
function firstSegments(path: string): string | undefined {
  let end = 0;
  for (let i = 0; i < DISPATCH_SEGMENTS; i++) {
    end = path.indexOf('/', end + 1);
    if (end < 0) return i === DISPATCH_SEGMENTS - 1 ? path.slice(1) : undefined;
  }
  return path.slice(1, end);
}

function runOperation(def: RouteDef, deps: MountDeps): RequestHandler {
  const mode = def.idempotency ?? 'none';
  const route = `${def.method.toUpperCase()} ${def.path}`;
  return async (req, res, next) => {
    try {
      const media = def.acceptsForm
        ? ['application/json', 'application/*+json', 'application/x-www-form-urlencoded']
        : ['application/json', 'application/*+json'];
      if (def.request?.body && hasBody(req) && !req.is(media)) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${media.join(' or ')}`);
      }
      const principal =
        def.auth === 'none' ? await resolvePrincipal(req, deps.authenticators) : req.principal;
      let idempotency: IdempotencyClaim | null = null;
      const execute = async (): Promise<Reply> => {
        try {
          const ctx = {
            idempotency,
            body: def.request?.body ? parseOrThrow(def.request.body, req.body ?? {}, 'body') : undefined,
            query: def.request?.query ? parseOrThrow(def.request.query, req.query, 'query') : undefined,
            params: def.request?.params ? parseOrThrow(def.request.params, req.params, 'path') : undefined,
            principal,
            correlationId: req.correlationId,
            // The request's child logger is made only if the operation logs.
            get log() {
              return requestLogger(req);
            },
            req,
          };
          return await (def.handler as (c: typeof ctx) => Promise<Reply>)(ctx);
        } catch (err) {
          const apiError = toApiError(err);
          if (apiError.status >= 500) throw err;
          return errorReply(apiError);
        }
      };

      const owner = principal ? principal.tenant.id : (def.idempotencyOwner?.(req) ?? null);
      // A raw-body route applies the key itself (see RouteBase.rawBody).
      const key = owner && !def.rawBody ? readIdempotencyKey(req.get(IDEMPOTENCY_HEADER), mode) : null;
      let reply: Reply;
      if (def.idempotencyInOperation) {
        idempotency =
          key && owner ? { tenantId: owner, route, key, requestHash: requestHash(req.path, req.body) } : null;
        reply = await execute();
      } else if (key && owner) {
        reply = await runIdempotent(
          { db: deps.db, ttlHours: deps.idempotencyTtlHours, now: deps.now, secrets: deps.secrets },
          { tenantId: owner, route, key, requestHash: requestHash(req.path, req.body) },
          async () => {
            const r = await execute();
            if (isStreamReply(r) || isBytesReply(r))
              throw new Error(`${route}: idempotent operations answer JSON`);
            return r as JsonReply;
          },
        );
        if ((reply as { replayed?: boolean }).replayed) res.setHeader('Idempotent-Replayed', 'true');
      } else {
        reply = await execute();
      }
      await sendReply(res, reply);
      if (MUTATING.has(def.method) && reply.status < 400)
        deps.afterWrite?.(
          def.publicEffect && !isStreamReply(reply) && !isBytesReply(reply) ? def.publicEffect(reply) : 'any',
        );
    } catch (err) {
      next(err);
    }
  };
}
