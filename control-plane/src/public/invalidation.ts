/**
 * On PostgreSQL, replicas tell each other what to throw away of their public answer cache (public/cache.ts):
 * a replica whose API wrote something sends NOTIFY on one channel with what the write may have changed
 * (everything, or the resolver answers of some labels), every replica LISTENs on it. This only makes
 * replicas catch up sooner; the cache's max age (<= 1 s) is what bounds staleness, so a lost notification
 * (a dropped listening connection, a replica starting) costs at most that long.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logging/logger.js';
import type { Db } from '../store/index.js';
import type { Invalidated, PublicAnswerCache } from './cache.js';

/** One channel for the whole database; the payload names the schema, so tests in their own schemas stay apart. */
export const INVALIDATION_CHANNEL = 'dpp_public_cache';
const RECONNECT_MS = 1_000;
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more: past this, the notice says everything. */
const PAYLOAD_MAX = 7_000;

/** A notice on the channel: the schema, the replica that sent it, and the labels (none: everything). */
interface Notice {
  schema: string;
  from: string;
  labels?: readonly string[];
}

/** The payload telling the others what `what` names (everything when the labels do not fit). */
export function noticePayload(schema: string, from: string, what: Invalidated): string {
  if (what !== 'any') {
    const payload = JSON.stringify({ schema, from, labels: what } satisfies Notice);
    if (Buffer.byteLength(payload) <= PAYLOAD_MAX) return payload;
  }
  return JSON.stringify({ schema, from } satisfies Notice);
}

/** A notice read back, or undefined for a payload that is not one (another version's, say). */
export function parseNotice(payload: string | undefined): Notice | undefined {
  try {
    const n = JSON.parse(payload ?? '') as Partial<Notice> | null;
    if (typeof n?.schema !== 'string' || typeof n.from !== 'string') return undefined;
    if (n.labels !== undefined && !(Array.isArray(n.labels) && n.labels.every((l) => typeof l === 'string')))
      return undefined;
    return { schema: n.schema, from: n.from, ...(n.labels ? { labels: n.labels } : {}) };
  } catch {
    return undefined;
  }
}

export interface CacheInvalidationOptions {
  databaseUrl: string;
  /** The schema the store uses (`public` unless tests give their own). */
  schema: string;
  db: Db;
  cache: PublicAnswerCache;
  log: Logger;
}

export class CacheInvalidation {
  /** This replica, so it ignores its own notifications. */
  private readonly id = randomUUID();
  private client: pg.Client | null = null;
  private stopped = false;
  private reconnect: NodeJS.Timeout | null = null;
  /** A NOTIFY in flight, and what writes that came meanwhile threw away (one more is sent after it). */
  private sending = false;
  private pending: 'any' | Set<string> | null = null;

  constructor(private readonly opts: CacheInvalidationOptions) {
    opts.cache.onInvalidate((what) => this.notify(what));
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.databaseUrl });
    client.on('notification', (m) => {
      const notice = parseNotice(m.payload);
      if (!notice || notice.schema !== this.opts.schema || notice.from === this.id) return;
      if (notice.labels) this.opts.cache.dropLabels(notice.labels);
      else this.opts.cache.dropAll();
    });
    client.on('error', (err) => {
      this.opts.log.warn({ err }, 'public cache invalidation: listening connection lost; reconnecting');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${INVALIDATION_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    // Whatever changed while this replica was not listening.
    this.opts.cache.dropAll();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      if (this.stopped) return;
      this.start().catch((err: unknown) => {
        this.opts.log.warn({ err }, 'public cache invalidation: could not listen; retrying');
        this.retry();
      });
    }, RECONNECT_MS);
    this.reconnect.unref();
  }

  /** Tells the other replicas; what writes throw away while a NOTIFY is in flight goes in the next one. */
  private notify(what: Invalidated): void {
    if (this.stopped) return;
    if (this.sending) {
      if (what === 'any' || this.pending === 'any') this.pending = 'any';
      else {
        const labels = this.pending ?? new Set<string>();
        for (const label of what) labels.add(label);
        this.pending = labels;
      }
      return;
    }
    this.sending = true;
    const payload = noticePayload(this.opts.schema, this.id, what);
    sql`select pg_notify(${INVALIDATION_CHANNEL}, ${payload})`
      .execute(this.opts.db)
      .catch((err: unknown) => this.opts.log.warn({ err }, 'public cache invalidation: NOTIFY failed'))
      .finally(() => {
        this.sending = false;
        const next = this.pending;
        this.pending = null;
        if (next) this.notify(next === 'any' ? 'any' : [...next]);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnect) clearTimeout(this.reconnect);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
