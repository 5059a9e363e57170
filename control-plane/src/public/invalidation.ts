/**
 * On PostgreSQL, replicas tell each other to empty their public answer cache (public/cache.ts): a replica
 * whose API wrote something sends NOTIFY on one channel, every replica LISTENs on it. This only makes
 * replicas catch up sooner; the cache's max age (<= 1 s) is what bounds staleness, so a lost notification
 * (a dropped listening connection, a replica starting) costs at most that long.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logging/logger.js';
import type { Db } from '../store/index.js';
import type { PublicAnswerCache } from './cache.js';

/** One channel for the whole database; the payload names the schema, so tests in their own schemas stay apart. */
export const INVALIDATION_CHANNEL = 'dpp_public_cache';
const RECONNECT_MS = 1_000;

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
  /** A NOTIFY in flight, and whether another write came meanwhile (one more is sent after it). */
  private sending = false;
  private again = false;

  constructor(private readonly opts: CacheInvalidationOptions) {
    opts.cache.onInvalidate(() => this.notify());
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.databaseUrl });
    client.on('notification', (m) => {
      const [schema, sender] = (m.payload ?? '').split(' ');
      if (schema === this.opts.schema && sender !== this.id) this.opts.cache.dropAll();
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

  /** Tells the other replicas; writes that come while a NOTIFY is in flight share the next one. */
  private notify(): void {
    if (this.stopped) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    sql`select pg_notify(${INVALIDATION_CHANNEL}, ${`${this.opts.schema} ${this.id}`})`
      .execute(this.opts.db)
      .catch((err: unknown) => this.opts.log.warn({ err }, 'public cache invalidation: NOTIFY failed'))
      .finally(() => {
        this.sending = false;
        if (this.again) {
          this.again = false;
          this.notify();
        }
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
