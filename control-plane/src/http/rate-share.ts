/**
 * Shares rate-limit counts between control-plane replicas through the database (DESIGN.md, scale path:
 * replicas coordinate through the database, not process memory). Every `intervalMs`, each replica adds the
 * requests it admitted per tenant to `rate_windows` in one upsert per tenant, which also starts a new window
 * when the stored one has ended, and takes back the window's start and total for its next decisions.
 *
 * The bound this gives: a tenant can exceed its budget by what the replicas admit within one interval
 * before they hear of each other. The decision itself never waits on the database.
 */
import { sql } from 'kysely';
import type { Logger } from '../logging/logger.js';
import type { Db } from '../store/index.js';
import type { PendingWindow, RateLimiter } from './rate-limit.js';

export class RateShare {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly limiter: RateLimiter<string>,
    private readonly log: Logger,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.syncOnce()
        .catch((err: unknown) => this.log.warn({ err }, 'rate-limit sync failed; will retry'))
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Adds this replica's pending admissions to the shared windows and adopts the totals. */
  async syncOnce(): Promise<void> {
    const pending = this.limiter.takePending();
    for (let i = 0; i < pending.length; i++) {
      const w = pending[i]!;
      try {
        const { startedAt, total } = await this.add(w);
        this.limiter.adopt(w, startedAt, total);
      } catch (err) {
        for (const left of pending.slice(i)) this.limiter.restore(left);
        throw err;
      }
    }
  }

  private async add(w: PendingWindow): Promise<{ startedAt: number; total: number }> {
    // In the update, both CASEs read the stored row: a stored window that ended before this one began
    // is replaced by this one; otherwise this replica's count is added to it.
    const { rows } = await sql<{ started_ms: number | string; used: number | string }>`
      insert into rate_windows (tenant_id, started_ms, used) values (${w.key}, ${w.startedAt}, ${w.delta})
      on conflict (tenant_id) do update set
        started_ms = case when excluded.started_ms - rate_windows.started_ms >= ${w.windowMs}
          then excluded.started_ms else rate_windows.started_ms end,
        used = case when excluded.started_ms - rate_windows.started_ms >= ${w.windowMs}
          then excluded.used else rate_windows.used + excluded.used end
      returning started_ms, used`.execute(this.db);
    const row = rows[0]!;
    return { startedAt: Number(row.started_ms), total: Number(row.used) };
  }
}
