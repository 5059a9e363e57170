import type { BytesReply, JsonReply } from '../http/index.js';

/**
 * Answers of the two hottest public operations (the resolver's redirect and the public passport read),
 * kept in memory for at most `maxAgeMs` (PUBLIC_CACHE_MAX_AGE_MS, <= 1 s).
 *
 * Why it stays correct:
 * - Staleness is bounded by construction: an entry expires `maxAgeMs` after the moment its computation
 *   STARTED (before its database reads), so a change committed at time c is shown by every replica from
 *   c + maxAgeMs on, whatever wrote it (an API call on another replica, a worker, a migration).
 * - A successful write through this replica's API empties the cache at once (`invalidate`, wired to the
 *   request chain's afterWrite), and on PostgreSQL tells the other replicas to empty theirs (NOTIFY,
 *   public/invalidation.ts), so in practice they catch up in milliseconds; the bound above is the promise.
 * - A computation that was under way when the cache was emptied does not store its answer (a generation
 *   counter), so a read racing a write never puts the old state back.
 *
 * Only answers that depend on nothing but the entry's key are stored: the key is the request's origin,
 * its URL (path and query) and whether its Accept asks for a linkset. Per-request headers (correlation id,
 * rate-limit counts) are added by whoever sends the answer.
 */
export interface CachedAnswer extends BytesReply {
  /** The operation's own headers (Location, Link, Cache-Control, Vary, Content-Type). */
  headers: Readonly<Record<string, string>>;
  /** The body as sent (JSON), or undefined for none. */
  bytes: Buffer | undefined;
  /** The route pattern, for logs and metrics (`/01/{gtin}/21/{serial}`). */
  route: string;
}

interface Entry {
  answer: CachedAnswer;
  expiresAt: number;
}

export interface PublicCacheOptions {
  /** 0 turns the cache off. */
  maxAgeMs: number;
  /** Most entries kept; the least recently stored go first. */
  maxEntries?: number;
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 20_000;

export class PublicAnswerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private generation = 0;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly opts: PublicCacheOptions) {
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.now = opts.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.opts.maxAgeMs > 0;
  }

  /** A fresh answer for the key, or undefined. */
  get(key: string): CachedAnswer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (this.now() >= e.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return e.answer;
  }

  /**
   * The answer of `key`: a fresh one from memory, else `compute`'s. Concurrent misses of one key share one
   * computation. `compute` returns the answer to send and whether it may be stored (an answer that depends
   * on more than the key, e.g. an error page for a browser, is sent but not stored).
   */
  async through<T>(
    key: string,
    compute: () => Promise<{ value: T; answer: CachedAnswer | undefined }>,
    fromCache: (answer: CachedAnswer) => T,
  ): Promise<T> {
    if (!this.enabled) return (await compute()).value;
    const hit = this.get(key);
    if (hit) return fromCache(hit);
    const pending = this.inFlight.get(key) as Promise<{ value: T }> | undefined;
    if (pending) return (await pending).value;
    const generation = this.generation;
    const startedAt = this.now();
    const p = compute();
    this.inFlight.set(key, p);
    try {
      const r = await p;
      if (r.answer && generation === this.generation) this.store(key, r.answer, startedAt);
      return r.value;
    } finally {
      if (this.inFlight.get(key) === p) this.inFlight.delete(key);
    }
  }

  private store(key: string, answer: CachedAnswer, startedAt: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { answer, expiresAt: startedAt + this.opts.maxAgeMs });
  }

  /** Empties the cache: something that may change a public answer was written. */
  invalidate(): void {
    this.dropAll();
    for (const l of this.listeners) l();
  }

  /** Empties the cache without telling anyone (another replica told us). */
  dropAll(): void {
    this.generation += 1;
    this.entries.clear();
    this.inFlight.clear();
  }

  /** Called on every local `invalidate` (to tell the other replicas). */
  onInvalidate(listener: () => void): void {
    this.listeners.push(listener);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A JSON reply as it goes on the wire, serialised once: its headers with the content type Express's
 * `res.json` gives (the reply's own, else application/json, with `charset=utf-8`) and the body's bytes.
 */
export function cachedAnswer(reply: JsonReply, route: string): CachedAnswer {
  const json = reply.body !== undefined && reply.status !== 204 ? JSON.stringify(reply.body) : undefined;
  return jsonAnswer({ status: reply.status, headers: reply.headers ?? {} }, json, route);
}

/** `cachedAnswer` of a body already serialised to JSON, as text or UTF-8 bytes (undefined for none). */
export function jsonAnswer(
  reply: { status: number; headers: Readonly<Record<string, string>> },
  json: string | Buffer | undefined,
  route: string,
): CachedAnswer {
  const headers: Record<string, string> = { ...reply.headers };
  if (json === undefined) return { status: reply.status, headers, bytes: undefined, route };
  const type = headers['Content-Type'] ?? 'application/json';
  headers['Content-Type'] = /;\s*charset=/i.test(type) ? type : `${type}; charset=utf-8`;
  return { status: reply.status, headers, bytes: typeof json === 'string' ? Buffer.from(json) : json, route };
}

/** The key of a public answer: origin, URL (path and query) and whether Accept asks for a linkset. */
export function answerKey(origin: string, url: string, accept: string | undefined): string {
  return `${origin} ${url} ${accept?.includes('application/linkset+json') ? 'L' : '-'}`;
}
