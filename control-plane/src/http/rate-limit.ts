import type { NextFunction, Request, Response } from 'express';
import type { RateBudget, Tier } from '../config/index.js';
import { ApiError } from './api-error.js';

interface Window {
  startedAt: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window ends. */
  resetAt: number;
}

/**
 * Per-tenant fixed-window budgets, one per tier (configuration: RATE_LIMITS). In memory: each replica
 * counts its own share, so behind N replicas a tenant's effective budget is up to N times the figure.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly budgets: Record<Tier, RateBudget>,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string, tier: Tier): RateDecision {
    const budget = this.budgets[tier];
    const windowMs = budget.windowSeconds * 1000;
    const t = this.now();
    let w = this.windows.get(key);
    if (!w || t - w.startedAt >= windowMs) {
      w = { startedAt: t, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 50_000) this.prune(t);
    }
    const resetAt = Math.ceil((w.startedAt + windowMs) / 1000);
    if (w.count >= budget.limit) return { allowed: false, limit: budget.limit, remaining: 0, resetAt };
    w.count += 1;
    return { allowed: true, limit: budget.limit, remaining: budget.limit - w.count, resetAt };
  }

  private prune(t: number): void {
    const longest = Math.max(...Object.values(this.budgets).map((b) => b.windowSeconds)) * 1000;
    for (const [k, w] of this.windows) if (t - w.startedAt >= longest) this.windows.delete(k);
  }
}

/** 429 RATE_LIMITED over budget, with X-RateLimit-* and Retry-After (api-v2.md, Limits). */
export function rateLimit(limiter: RateLimiter, now: () => number = Date.now) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const principal = req.principal;
    if (!principal) return next();
    const d = limiter.take(principal.tenant.id, principal.tenant.tier);
    res.setHeader('X-RateLimit-Limit', String(d.limit));
    res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    res.setHeader('X-RateLimit-Reset', String(d.resetAt));
    if (d.allowed) return next();
    const retryAfter = Math.max(1, d.resetAt - Math.floor(now() / 1000));
    next(
      new ApiError(
        'RATE_LIMITED',
        `Rate limit of ${d.limit} requests exceeded; retry after ${retryAfter} s`,
        {
          details: { limit: d.limit, resetAt: d.resetAt },
          headers: { 'Retry-After': String(retryAfter) },
        },
      ),
    );
  };
}
