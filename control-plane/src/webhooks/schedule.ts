/**
 * When a failed delivery is tried again, and which answers are worth another try.
 *
 * The schedule is the delay after attempt n before attempt n + 1: 11 retries after the first try, 12
 * attempts in all, spread over about three days (254,555 s ≈ 2.95 days before jitter). Each delay is
 * moved by up to ±20% at random so that endpoints that failed together do not retry in lockstep.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000, // 5 s
  30_000, // 30 s
  120_000, // 2 min
  600_000, // 10 min
  1_800_000, // 30 min
  3_600_000, // 1 h
  10_800_000, // 3 h
  21_600_000, // 6 h
  43_200_000, // 12 h
  86_400_000, // 24 h
  86_400_000, // 24 h
];

export const DEFAULT_JITTER_RATIO = 0.2;

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DEFAULT_DISABLE_AFTER_MS = 3 * 86_400_000;

/** Longest wait a 429 or 503 `Retry-After` may impose on a retry. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

export interface RetrySchedule {
  delaysMs: readonly number[];
  jitterRatio: number;
  /** Uniform in [0, 1); injected in tests. */
  random: () => number;
}

/**
 * The delay before the next attempt once `attemptsMade` attempts have failed, or undefined when the
 * schedule is spent. A `Retry-After` the receiver asked for is honoured when it is longer.
 */
export function nextRetryDelay(
  schedule: RetrySchedule,
  attemptsMade: number,
  retryAfterMs?: number,
): number | undefined {
  const base = schedule.delaysMs[attemptsMade - 1];
  if (base === undefined) return undefined;
  const jitter = 1 + (schedule.random() * 2 - 1) * schedule.jitterRatio;
  const delay = Math.max(0, Math.round(base * jitter));
  return retryAfterMs === undefined ? delay : Math.max(delay, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** What one attempt's result means for its delivery. */
export type AttemptVerdict = 'delivered' | 'retry' | 'give_up';

/**
 * api-v2.md, Events, receiver rule 4: 2xx is done; 4xx means "do not retry"; 5xx and timeouts are
 * retried. 408 (Request Timeout) and 429 (Too Many Requests) are 4xx that say "later", not "never",
 * so they are retried. A 3xx is not followed (a redirect could point anywhere) and is retried, so a
 * URL fixed within the schedule still gets the event. No answer at all (timeout, refused, reset, an
 * address refused by the SSRF policy) is retried.
 */
export function verdictOf(statusCode: number | null): AttemptVerdict {
  if (statusCode === null) return 'retry';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 408 || statusCode === 429) return 'retry';
  if (statusCode >= 400 && statusCode < 500) return 'give_up';
  return 'retry';
}

/** Reads `Retry-After` (seconds or an HTTP date) as milliseconds from `now`; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
