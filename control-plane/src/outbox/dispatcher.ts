import { sql } from 'kysely';
import type { Logger } from '../logging/logger.js';
import { PollingLoop } from '../workers/index.js';
import { type LeaseColumns, claim, retryDelay } from '../queue/index.js';
import { type Db, type Dialect, type OutboxTable, prepared } from '../store/index.js';
import { outboxRowsWritten, type OutboxTopic } from './outbox.js';

export interface OutboxRow {
  id: string;
  tenantId: string | null;
  topic: string;
  payload: unknown;
  attempts: number;
  createdAt: string;
}

/** Handles one outbox row; a throw leaves the row for a later retry with backoff. Must be idempotent. */
export type OutboxHandler = (row: OutboxRow) => Promise<void>;

/**
 * A topic's handler that can also take the rows of a pass together (a few statements for all of them instead
 * of a few each): `many` handles them all or throws, and then each row is handled again alone by `one`, so a
 * row that fails fails alone. Both must be idempotent.
 */
export interface OutboxBatchHandler {
  one: OutboxHandler;
  many(rows: readonly OutboxRow[]): Promise<void>;
}

export interface DispatcherOptions {
  db: Db;
  dialect: Dialect;
  log: Logger;
  /** Idle poll interval; `wake()` short-cuts it after a commit in this process. */
  pollMs?: number;
  batchSize?: number;
  /** How long a claimed row stays invisible to other dispatchers (replicas). */
  lockMs?: number;
  now?: () => number;
}

const BACKOFF_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 3_600_000];
/** Rows marked processed by one UPDATE (a pass claims `batchSize`, 100 by default). */
const MARK_CHUNK = 500;

/** Rows handled: done, their lease let go. */
const markProcessed = prepared((db: Db, at: string, ids: readonly string[]) =>
  db
    .updateTable('outbox')
    .set({ processed_at: at, locked_until: null, last_error: null })
    .where('id', 'in', ids),
);

/**
 * Where outbox rows keep their claim. No owner column: a row's handler is idempotent, so a dispatcher
 * whose lease ran out and a second one handling the same row is harmless, only wasted.
 */
const OUTBOX_QUEUE: LeaseColumns<'outbox'> = {
  table: 'outbox',
  id: 'id',
  lockedUntil: 'locked_until',
  order: 'created_at',
};

/**
 * Drains the outbox: claims due rows (SKIP LOCKED on PostgreSQL, so replicas share the work), hands
 * each to its topic's handler, and marks it processed, or schedules a retry with backoff. One handler's
 * failure is logged and contained; it never stops the loop.
 */
export class OutboxDispatcher {
  /** Each topic's handler; `many` only where the handler takes a pass's rows together. */
  private readonly handlers = new Map<string, { one: OutboxHandler; many?: OutboxBatchHandler['many'] }>();
  private readonly loop: PollingLoop;
  /** `outboxRowsWritten()` when the last pass began. */
  private seenWrites = -1;
  private readonly batchSize: number;
  private readonly lockMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: DispatcherOptions) {
    this.batchSize = opts.batchSize ?? 100;
    this.lockMs = opts.lockMs ?? 30_000;
    this.now = opts.now ?? Date.now;
    this.loop = new PollingLoop({
      name: 'outbox',
      pollMs: opts.pollMs ?? 500,
      log: opts.log,
      // A full batch leaves more due rows: the next pass goes at once.
      pass: async () => ((await this.drainOnce()) === this.batchSize ? 'worked' : 'idle'),
    });
  }

  register(topic: OutboxTopic, handler: OutboxHandler | OutboxBatchHandler): void {
    if (this.handlers.has(topic)) throw new Error(`outbox topic ${topic} already has a handler`);
    this.handlers.set(topic, typeof handler === 'function' ? { one: handler } : handler);
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Asks for a pass soon, but only if this process wrote outbox rows since the last pass began: the hook
   * after every write request, most of which queue no side effect.
   */
  wakeIfWritten(): void {
    if (outboxRowsWritten() !== this.seenWrites) this.wake();
  }

  /**
   * Asks for a pass (after a commit that wrote outbox rows): at once when the loop waits, after the pass in
   * hand when one runs. Wake-ups that come during a pass are one pass after it, however many they are.
   */
  wake(): void {
    this.loop.wake();
  }

  /** Stops the loop after the batch in hand. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * One pass over due rows; returns how many were handled. Each topic's rows go to its handler together,
   * and the rows handled are marked processed with one statement. Exposed for tests and benchmarks.
   */
  async drainOnce(): Promise<number> {
    this.seenWrites = outboxRowsWritten();
    const rows = await this.claim();
    const byTopic = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const some = byTopic.get(row.topic);
      if (some) some.push(row);
      else byTopic.set(row.topic, [row]);
    }
    const done = await Promise.all(
      [...byTopic].map(async ([topic, some]) => {
        const handler = this.handlers.get(topic);
        if (handler?.many) {
          try {
            await handler.many(some);
            return some;
          } catch (err) {
            this.opts.log.warn(
              { err, topic, rows: some.length },
              'outbox batch failed; its rows go one by one',
            );
          }
        }
        const alone = await Promise.all(some.map(async (row) => ((await this.handle(row)) ? row : null)));
        return alone.filter((row) => row !== null);
      }),
    );
    const handled = done.flat().map((row) => row.id);
    for (let i = 0; i < handled.length; i += MARK_CHUNK) {
      await this.opts.db.executeQuery(
        markProcessed(this.opts.db, new Date(this.now()).toISOString(), handled.slice(i, i + MARK_CHUNK)),
      );
    }
    return rows.length;
  }

  private async claim(): Promise<OutboxRow[]> {
    const now = new Date(this.now()).toISOString();
    const topics = [...this.handlers.keys()];
    if (topics.length === 0) return [];
    const rows = await claim(this.opts.db, OUTBOX_QUEUE, {
      now: this.now(),
      leaseMs: this.lockMs,
      limit: this.batchSize,
      due: (eb) =>
        eb.and([eb('processed_at', 'is', null), eb('available_at', '<=', now), eb('topic', 'in', topics)]),
    });
    return rows.map(outboxRowOf).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Handles one row alone: true when it was handled, else it is scheduled for a retry with backoff. */
  private async handle(row: OutboxRow): Promise<boolean> {
    const handler = this.handlers.get(row.topic);
    try {
      if (!handler) throw new Error(`no handler for outbox topic ${row.topic}`);
      await handler.one(row);
      return true;
    } catch (err) {
      const attempts = row.attempts + 1;
      const delay = retryDelay(BACKOFF_MS, attempts);
      this.opts.log.warn(
        { err, outboxId: row.id, topic: row.topic, attempts },
        'outbox handler failed; will retry',
      );
      await this.opts.db
        .updateTable('outbox')
        .set({
          attempts,
          locked_until: null,
          last_error: String(err instanceof Error ? err.message : err).slice(0, 1000),
          available_at: new Date(this.now() + delay).toISOString(),
        })
        .where('id', '=', row.id)
        .execute();
      return false;
    }
  }
}

/** A stored outbox row as its handler sees it. */
export function outboxRowOf(r: OutboxTable): OutboxRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    topic: r.topic,
    payload: JSON.parse(r.payload) as unknown,
    attempts: r.attempts,
    createdAt: r.created_at,
  };
}

/** Counts rows still to dispatch (for /metrics and tests). */
export async function outboxBacklog(db: Db): Promise<number> {
  const r = await db
    .selectFrom('outbox')
    .select(sql<number>`count(*)`.as('n'))
    .where('processed_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
