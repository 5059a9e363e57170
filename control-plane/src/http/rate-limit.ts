import type { NextFunction, Request, Response } from 'express';
import type { RateBudget, Tier } from '../config/index.js';
import { ApiError } from './api-error.js';

interface Window<C extends string> {
  tier: C;
  startedAt: number;
  /** Requests admitted in this window as far as this replica knows (its own and, shared, the others'). */
  count: number;
  /** This replica's admissions not yet added to the shared count. */
  pending: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window ends. */
  resetAt: number;
}

/** This replica's admissions of one window, to add to the shared count (see RateShare). */
export interface PendingWindow {
  key: string;
  startedAt: number;
  windowMs: number;
  delta: number;
}

/**
 * Per-tenant fixed-window budgets, one per tier (configuration: RATE_LIMITS), decided in memory so a
 * request never waits on the database for it. Alone (one process, SQLite), the count is exact. Behind
 * several replicas (PostgreSQL), `RateShare` adds each replica's admissions to a shared count every
 * 250 ms and hands back the total, so the budget holds across replicas up to what they admit within one
 * such interval.
 */
export class RateLimiter<C extends string = Tier> {
  private readonly windows = new Map<string, Window<C>>();

  constructor(
    private readonly budgets: Record<C, RateBudget>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `key` has spent its budget of `tier` in the current window, without counting a request. */
  exhausted(key: string, tier: C): RateDecision {
    const budget = this.budgets[tier];
    const windowMs = budget.windowSeconds * 1000;
    const t = this.now();
    const w = this.windows.get(key);
    if (!w || t - w.startedAt >= windowMs)
      return {
        allowed: true,
        limit: budget.limit,
        remaining: budget.limit,
        resetAt: Math.ceil((t + windowMs) / 1000),
      };
    const resetAt = Math.ceil((w.startedAt + windowMs) / 1000);
    const remaining = Math.max(0, budget.limit - w.count);
    return { allowed: remaining > 0, limit: budget.limit, remaining, resetAt };
  }

  take(key: string, tier: C): RateDecision {
    const budget = this.budgets[tier];
    const windowMs = budget.windowSeconds * 1000;
    const t = this.now();
    let w = this.windows.get(key);
    if (!w || t - w.startedAt >= windowMs) {
      w = { tier, startedAt: t, count: 0, pending: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 50_000) this.prune(t);
    }
    const resetAt = Math.ceil((w.startedAt + windowMs) / 1000);
    if (w.count >= budget.limit) return { allowed: false, limit: budget.limit, remaining: 0, resetAt };
    w.count += 1;
    w.pending += 1;
    return { allowed: true, limit: budget.limit, remaining: budget.limit - w.count, resetAt };
  }

  /** Hands over the admissions not yet shared, and counts them as sent. */
  takePending(): PendingWindow[] {
    const out: PendingWindow[] = [];
    for (const [key, w] of this.windows) {
      if (w.pending === 0) continue;
      out.push({
        key,
        startedAt: w.startedAt,
        windowMs: this.budgets[w.tier].windowSeconds * 1000,
        delta: w.pending,
      });
      w.pending = 0;
    }
    return out;
  }

  /**
   * The shared answer for a window sent by `takePending`: the window all replicas count in (it may have
   * started on another one) and its total. Admissions made here since the send stay on top.
   */
  adopt(sent: PendingWindow, startedAt: number, total: number): void {
    const w = this.windows.get(sent.key);
    if (!w || w.startedAt !== sent.startedAt) return; // a newer window began here meanwhile
    w.startedAt = startedAt;
    w.count = total + w.pending;
  }

  /** A send that failed: its admissions are sent again with the next ones. */
  restore(sent: PendingWindow): void {
    const w = this.windows.get(sent.key);
    if (w && w.startedAt === sent.startedAt) w.pending += sent.delta;
  }

  private prune(t: number): void {
    const longest = Math.max(...Object.values<RateBudget>(this.budgets).map((b) => b.windowSeconds)) * 1000;
    for (const [k, w] of this.windows) if (t - w.startedAt >= longest) this.windows.delete(k);
  }
}

/** The X-RateLimit-* headers of a decision (api-v2.md, Limits). */
export function setRateHeaders(res: Response, d: RateDecision): void {
  for (const [name, value] of Object.entries(rateHeaderValues(d))) res.setHeader(name, value);
}

/** The X-RateLimit-* headers of a decision, as name and value. */
export function rateHeaderValues(d: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.resetAt),
  };
}

/** 429 RATE_LIMITED for a spent budget, with Retry-After. */
export function rateLimited(d: RateDecision, now: () => number = Date.now): ApiError {
  const retryAfter = Math.max(1, d.resetAt - Math.floor(now() / 1000));
  return new ApiError(
    'RATE_LIMITED',
    `Rate limit of ${d.limit} requests exceeded; retry after ${retryAfter} s`,
    {
      details: { limit: d.limit, resetAt: d.resetAt },
      headers: { 'Retry-After': String(retryAfter) },
    },
  );
}

/** 429 RATE_LIMITED over the tenant's budget, with X-RateLimit-* and Retry-After (api-v2.md, Limits). */
export function rateLimit(limiter: RateLimiter, now: () => number = Date.now) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const principal = req.principal;
    if (!principal) return next();
    const d = limiter.take(principal.tenant.id, principal.tenant.tier);
    setRateHeaders(res, d);
    next(d.allowed ? undefined : rateLimited(d, now));
  };
}
