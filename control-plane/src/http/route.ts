import type { Readable } from 'node:stream';
import type { Request } from 'express';
import type { ZodType } from 'zod';
import type { ErrorCode } from '@dpp/shared';
import type { Tier } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { IdempotencyScope } from './idempotency.js';
import type { Principal } from './principal.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How an operation treats the Idempotency-Key header (api-v2.md, Errors: enforcement is per route). */
export type IdempotencyMode = 'required' | 'recommended' | 'none';

export interface RouteAuth {
  /** Any one of these scopes admits the call (the spec's alternatives, e.g. dpp:edit or supply_chain:edit). */
  scopes: readonly string[];
  /** publish-dpp answers 403 FORBIDDEN instead of API_SCOPE_DENIED (api-v2.md, Authentication §4). */
  deniedCode?: 'API_SCOPE_DENIED' | 'FORBIDDEN';
  /** Lowest tier admitted, e.g. mid_market for registry broadcast. */
  minTier?: Tier;
  /** Credential kinds admitted; API keys by default. */
  principals?: readonly Principal['type'][];
  /**
   * The operation checks a device's principal in its own statements (`Unconfirmed.stillCurrent`: a claim in
   * its claim, a results batch in its reads) and reads it again when that fails, or before it refuses or
   * finds nothing (`Unconfirmed.confirm`, which admits or refuses it as this route does): a device principal
   * read for an earlier call is given to it without a read, one round trip less on every call.
   */
  checkedInStatement?: boolean;
}

export interface ResponseSpec {
  description: string;
  schema?: ZodType;
  /** Defaults to application/json. */
  contentType?: string;
  headers?: Record<string, string>;
}

export interface JsonReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A label's key as the resolver reads it: its GTIN (any length; compared as GTIN-14) and serial. */
export interface PublicLabel {
  gtin: string;
  serial: string;
}

/**
 * What a successful write may change of the answers every replica keeps for the public (the resolver's and
 * the public passport's, public/cache.ts): `any` of them, or only the resolver's answers of these labels
 * (none when the list is empty).
 */
export type PublicEffect = 'any' | readonly PublicLabel[];

/** A route's `publicEffect` when its writes change nothing the public is shown (a claim, a token). */
export const nothingPublic = (): PublicEffect => [];

export interface StreamReply {
  status: number;
  stream: Readable;
  contentType: string;
  headers?: Record<string, string>;
}

/**
 * A reply already on its way to the wire: its body serialised once, by whoever keeps it (the public answer
 * cache, public/cache.ts), with its Content-Type among the headers.
 */
export interface BytesReply {
  status: number;
  /** The body as sent, or undefined for none. */
  bytes: Buffer | undefined;
  headers: Readonly<Record<string, string>>;
}

export type Reply = JsonReply | StreamReply | BytesReply;

/** The Idempotency-Key a handler claims itself (`idempotencyInOperation`); the owner is the tenant. */
export type IdempotencyClaim = IdempotencyScope;

export interface RequestContext<B, Q, P> {
  /** Set for operations with `idempotencyInOperation` when the caller sent a key. */
  idempotency: IdempotencyClaim | null;
  body: B;
  query: Q;
  params: P;
  principal: Principal;
  correlationId: string;
  log: Logger;
  req: Request;
}

export interface PublicRequestContext<B, Q, P> extends Omit<RequestContext<B, Q, P>, 'principal'> {
  principal: Principal | undefined;
}

interface RouteBase<B, Q, P> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v2/products/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  idempotency?: IdempotencyMode;
  request?: { body?: ZodType<B>; query?: ZodType<Q>; params?: ZodType<P> };
  responses: Record<number, ResponseSpec>;
  /** Documented error codes of this operation (beyond the common ones). */
  errors?: readonly ErrorCode[];
  /** Skip the rate limit: the tenant's, or for an operation without a credential its client's (health, metrics). */
  rateLimited?: boolean;
  /**
   * For an operation without a credential: which per-client-IP budget it spends (IP_RATE_LIMITS), `public` by
   * default, and the answer statuses that count as a failed attempt against the `failures` budget.
   */
  ipLimit?: { budget: 'public' | 'credentials' | 'advisories'; failedStatuses?: readonly number[] };
  /** Also accept `application/x-www-form-urlencoded` bodies (the OAuth token endpoint, RFC 6749 §4.4.2). */
  acceptsForm?: boolean;
  /**
   * For public operations with an Idempotency-Key: who owns the key, since there is no tenant yet
   * (e.g. the OAuth client id). Keys are remembered per owner, route and key.
   */
  idempotencyOwner?: (req: Request) => string | null;
  /**
   * The operation claims the Idempotency-Key inside its own transaction (print results): the framework
   * only checks the header and hands `ctx.idempotency` to the handler.
   */
  idempotencyInOperation?: boolean;
  /**
   * Something waits on this operation (a claim an idle printer waits for): on SQLite's one connection its
   * queries, its credential check's included, are served before other waiting work (store `firstInLine`).
   */
  firstInLine?: boolean;
  /**
   * The operation can wait for first-in-line ones (a print result for the claims of idle printers): it does
   * not start, not even reading its body, while one is in progress in this process (http/precedence.ts).
   */
  deferrable?: boolean;
  /**
   * What the operation's successful write may change of the public answers, read from its reply: the
   * labels whose resolver answer it may change, or none (`[]`). Without it, any: every replica's public
   * answers are thrown away. The cache's max age bounds what a wrong declaration could cost.
   */
  publicEffect?: (reply: JsonReply) => PublicEffect;
  /** Largest JSON body this operation accepts (e.g. `16mb`) instead of the default 1 MB. */
  bodyLimit?: string;
  /**
   * The handler reads the request body itself as a stream (`ctx.req`), e.g. a CSV upload of any size.
   * The framework then neither parses the body nor applies the Idempotency-Key (it cannot hash a body it
   * has not read): such a handler implements the key itself. `request.body` must be absent.
   */
  rawBody?: boolean;
}

export interface AuthedRoute<B = unknown, Q = unknown, P = unknown> extends RouteBase<B, Q, P> {
  auth: RouteAuth;
  handler: (ctx: RequestContext<B, Q, P>) => Promise<Reply>;
}

export interface PublicRoute<B = unknown, Q = unknown, P = unknown> extends RouteBase<B, Q, P> {
  auth: 'none';
  handler: (ctx: PublicRequestContext<B, Q, P>) => Promise<Reply>;
}

export type RouteDef = AuthedRoute<never, never, never> | PublicRoute<never, never, never>;

/** Declares an authenticated operation; the types of body, query and params flow from the schemas. */
export function route<B = undefined, Q = undefined, P = undefined>(def: AuthedRoute<B, Q, P>): RouteDef {
  return def as unknown as RouteDef;
}

/** Declares a public (unauthenticated) operation. */
export function publicRoute<B = undefined, Q = undefined, P = undefined>(
  def: PublicRoute<B, Q, P>,
): RouteDef {
  return def as unknown as RouteDef;
}

export function isStreamReply(r: Reply): r is StreamReply {
  return 'stream' in r;
}

export function isBytesReply(r: Reply): r is BytesReply {
  return 'bytes' in r;
}

/** `/api/v2/products/{id}` -> `/api/v2/products/:id` */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** A matcher for the path, used to tell 404 (unknown path) from 405 (known path, wrong verb). */
export function pathMatcher(path: string): RegExp {
  const pattern = path
    .split(/(\{[A-Za-z0-9_]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}/?$`);
}
