/**
 * Budgets per client IP for the routes without a credential (configuration: IP_RATE_LIMITS), where no tenant
 * budget applies: the public passport and resolver (`public`), the OAuth token, device enrollment, sign-in
 * and sign-up (`credentials`), the security advisory feed (`advisories`), and failed sign-ins and enrollments (`failures`: spent, every attempt waits for
 * the window to end, right password or not). The client IP is the socket's peer unless TRUST_PROXY names the
 * proxy in front (then X-Forwarded-For, as Express reads it). Counts are shared across replicas like the
 * tenant budgets (RateShare), under keys `ip:<class>:<address>`.
 */
import type { NextFunction, Request, Response } from 'express';
import type { IpClass } from '../config/index.js';
import { type RateDecision, type RateLimiter, rateLimited, setRateHeaders } from './rate-limit.js';

export type IpLimiter = RateLimiter<IpClass>;

/** How a spent budget is answered: by default the API's 429 envelope; the web pages render their own. */
export type Refusal = (req: Request, res: Response, next: NextFunction, d: RateDecision) => void;

const apiRefusal =
  (now: () => number): Refusal =>
  (_req, _res, next, d) =>
    next(rateLimited(d, now));

export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** The limiter key of a client address's budget of `cls`. */
export const ipBudgetKey = (cls: IpClass, address: string) => `ip:${cls}:${address}`;

const keyOf = (cls: IpClass, req: Request) => ipBudgetKey(cls, clientAddress(req));

/** Counts the request against its client's budget of `cls`; over it, refused. */
export function ipRateLimit(
  limiter: IpLimiter,
  cls: 'public' | 'credentials' | 'advisories',
  now: () => number = Date.now,
  refuse?: Refusal,
) {
  const refusal = refuse ?? apiRefusal(now);
  return (req: Request, res: Response, next: NextFunction): void => {
    const d = limiter.take(keyOf(cls, req), cls);
    setRateHeaders(res, d);
    if (d.allowed) return next();
    refusal(req, res, next, d);
  };
}

/**
 * Refuses a client whose failed attempts spent the `failures` budget; counts an answer `failed` says is a
 * failure (a wrong credential) once it is sent.
 */
export function failedAttemptThrottle(
  limiter: IpLimiter,
  failed: (status: number) => boolean,
  now: () => number = Date.now,
  refuse?: Refusal,
) {
  const refusal = refuse ?? apiRefusal(now);
  return (req: Request, res: Response, next: NextFunction): void => {
    const key = keyOf('failures', req);
    const d = limiter.exhausted(key, 'failures');
    if (!d.allowed) {
      setRateHeaders(res, d);
      return refusal(req, res, next, d);
    }
    res.once('finish', () => {
      if (failed(res.statusCode)) limiter.take(key, 'failures');
    });
    next();
  };
}
