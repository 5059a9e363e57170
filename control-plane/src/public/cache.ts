import type { BytesReply, JsonReply, PublicEffect, PublicLabel } from '../http/index.js';

/**
 * Answers of the two hottest public operations (the resolver's redirect and the public passport read),
 * kept in memory for at most `maxAgeMs` (PUBLIC_CACHE_MAX_AGE_MS, <= 1 s).
 *
 * Why it stays correct:
 * - Staleness is bounded by construction: an entry expires `maxAgeMs` after the moment its computation
 *   STARTED (before its database reads), so a change committed at time c is shown by every replica from
 *   c + maxAgeMs on, whatever wrote it (an API call on another replica, a worker, a migration).
 * - A successful write through this replica's API throws away at once what it may have changed
 *   (`invalidate`, wired to the request chain's afterWrite), and on PostgreSQL tells the other replicas to
 *   do the same (NOTIFY, public/invalidation.ts), so in practice they catch up in milliseconds; the bound
 *   above is the promise. A write says what it may have changed (a route's `publicEffect`): the print
 *   loop's claims nothing, its seals the resolver answers of the labels sealed (a sealed label's answer
 *   links its proof); any other write, everything. So a floor sealing hundreds of labels a second leaves
 *   every other answer in memory.
 * - A computation that was under way when what it reads was invalidated does not store its answer (a
 *   sequence number per invalidation), so a read racing a write never puts the old state back.
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
  /** The label a resolver answer is about (`labelKey`). */
  label: string | undefined;
}

interface Computation {
  promise: Promise<unknown>;
  label: string | undefined;
}

export interface PublicCacheOptions {
  /** 0 turns the cache off. */
  maxAgeMs: number;
  /** Most entries kept; the least recently stored go first. */
  maxEntries?: number;
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 20_000;

/** What was invalidated, as this replica's listeners are told it: everything, or these labels' answers. */
export type Invalidated = 'any' | readonly string[];

/** The key of a label's resolver answers: its GTIN as GTIN-14 and its serial (which has no space). */
export function labelKey(label: PublicLabel): string {
  return `${label.gtin.padStart(14, '0')} ${label.serial}`;
}

export class PublicAnswerCache {
  private readonly entries = new Map<string, Entry>();
  /** The keys of the stored entries of each label. */
  private readonly byLabel = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Computation>();
  /** Counts invalidations: a computation stores its answer only if nothing it read was invalidated since. */
  private sequence = 0;
  private everythingAt = 0;
  /** Labels invalidated in the last `maxAgeMs`, oldest first: the sequence and time of each one's last. */
  private readonly labelsAt = new Map<string, { sequence: number; at: number }>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly listeners: ((what: Invalidated) => void)[] = [];
  /**
   * Answers given since start, by where they came from: memory, a lookup another request had begun, or a
   * lookup of their own (every answer when the cache is off). The metrics read them when scraped.
   */
  readonly answered = { cache: 0, shared: 0, lookup: 0 };

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
      this.remove(key, e);
      return undefined;
    }
    this.answered.cache += 1;
    return e.answer;
  }

  /**
   * The answer of `key`: a fresh one from memory, else `compute`'s. Concurrent misses of one key share one
   * computation. `compute` returns the answer to send and whether it may be stored (an answer that depends
   * on more than the key, e.g. an error page for a browser, is sent but not stored). `labelOf`: the label a
   * resolver answer is about (`labelKey`), whose seal throws it away; asked only when the cache computes.
   */
  async through<T>(
    key: string,
    compute: () => Promise<{ value: T; answer: CachedAnswer | undefined }>,
    fromCache: (answer: CachedAnswer) => T,
    labelOf?: () => string | undefined,
  ): Promise<T> {
    if (!this.enabled) {
      this.answered.lookup += 1;
      return (await compute()).value;
    }
    const hit = this.get(key);
    if (hit) return fromCache(hit);
    const pending = this.inFlight.get(key)?.promise as Promise<{ value: T }> | undefined;
    if (pending) {
      this.answered.shared += 1;
      return (await pending).value;
    }
    this.answered.lookup += 1;
    const sequence = this.sequence;
    const startedAt = this.now();
    const label = labelOf?.();
    const p = compute();
    this.inFlight.set(key, { promise: p, label });
    try {
      const r = await p;
      if (r.answer && !this.invalidatedSince(sequence, label)) this.store(key, r.answer, startedAt, label);
      return r.value;
    } finally {
      if (this.inFlight.get(key)?.promise === p) this.inFlight.delete(key);
    }
  }

  private invalidatedSince(sequence: number, label: string | undefined): boolean {
    if (this.everythingAt > sequence) return true;
    return label !== undefined && (this.labelsAt.get(label)?.sequence ?? 0) > sequence;
  }

  private store(key: string, answer: CachedAnswer, startedAt: number, label: string | undefined): void {
    const expiresAt = startedAt + this.opts.maxAgeMs;
    // Already as old as an answer may be (and any invalidation it raced may have been forgotten).
    if (expiresAt <= this.now()) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    if (this.entries.size >= this.maxEntries) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.remove(oldest, entry);
    }
    this.entries.set(key, { answer, expiresAt, label });
    if (label !== undefined) {
      const keys = this.byLabel.get(label);
      if (keys) keys.add(key);
      else this.byLabel.set(label, new Set([key]));
    }
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    if (entry.label === undefined) return;
    const keys = this.byLabel.get(entry.label);
    keys?.delete(key);
    if (keys?.size === 0) this.byLabel.delete(entry.label);
  }

  /** Throws away what a write may have changed (everything by default), and tells the listeners. */
  invalidate(effect: PublicEffect = 'any'): void {
    if (effect === 'any') {
      this.dropAll();
      for (const l of this.listeners) l('any');
      return;
    }
    if (effect.length === 0) return;
    const labels = [...new Set(effect.map(labelKey))];
    this.dropLabels(labels);
    for (const l of this.listeners) l(labels);
  }

  /** Empties the cache without telling anyone (another replica told us). */
  dropAll(): void {
    this.sequence += 1;
    this.everythingAt = this.sequence;
    this.labelsAt.clear();
    this.entries.clear();
    this.byLabel.clear();
    this.inFlight.clear();
  }

  /** Throws away the answers about these labels (`labelKey`) without telling anyone. */
  dropLabels(labels: readonly string[]): void {
    this.sequence += 1;
    const now = this.now();
    // An invalidation older than the max age concerns no computation whose answer could still be stored.
    for (const [label, { at }] of this.labelsAt) {
      if (at > now - this.opts.maxAgeMs) break;
      this.labelsAt.delete(label);
    }
    const dropped = new Set(labels);
    for (const label of dropped) {
      this.labelsAt.delete(label);
      this.labelsAt.set(label, { sequence: this.sequence, at: now });
      for (const key of this.byLabel.get(label) ?? []) this.entries.delete(key);
      this.byLabel.delete(label);
    }
    for (const [key, c] of this.inFlight)
      if (c.label !== undefined && dropped.has(c.label)) this.inFlight.delete(key);
  }

  /** Called on every local `invalidate` that threw something away (to tell the other replicas). */
  onInvalidate(listener: (what: Invalidated) => void): void {
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
