import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per control-plane instance (tests run several in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'dpp_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'dpp_http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly publicAnswers = new Counter({
    name: 'dpp_public_answers_total',
    help:
      'Resolver redirects and public passport reads by where the answer came from: the public cache, a lookup ' +
      'another request had begun, or a lookup of their own',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly outboxBacklog = new Gauge({
    name: 'dpp_outbox_backlog',
    help: 'Outbox rows not yet dispatched',
    registers: [this.registry],
  });

  readonly sqliteWalPages = new Gauge({
    name: 'dpp_sqlite_wal_pages',
    help: "Pages in SQLite's write-ahead log at the checkpointer's last pass (SQLite only)",
    registers: [this.registry],
  });

  readonly sqliteQuietCheckpoints = new Counter({
    name: 'dpp_sqlite_quiet_checkpoints_total',
    help: 'Quiet moments the SQLite writer was held for, so that a growing write-ahead log could start again (SQLite only)',
    registers: [this.registry],
  });

  readonly sqliteQuietCheckpointSeconds = new Counter({
    name: 'dpp_sqlite_quiet_checkpoint_seconds_total',
    help: 'Time the SQLite writer was held for quiet checkpoints, in all (SQLite only)',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dpp_' });
  }

  /** Sets the public answers' counts to those the public cache kept since start (called when scraped). */
  readPublicAnswers(answered: Readonly<Record<string, number>>): void {
    this.publicAnswers.reset();
    for (const [source, n] of Object.entries(answered)) this.publicAnswers.inc({ source }, n);
  }

  /** Sets the SQLite checkpointer's figures to those it kept since start (called when scraped). */
  readCheckpoints(stats: { walPages: number; quietMoments: number; quietSeconds: number }): void {
    this.sqliteWalPages.set(stats.walPages);
    this.sqliteQuietCheckpoints.reset();
    this.sqliteQuietCheckpoints.inc(stats.quietMoments);
    this.sqliteQuietCheckpointSeconds.reset();
    this.sqliteQuietCheckpointSeconds.inc(stats.quietSeconds);
  }

  /** Counts each request on finish, labelled by its route pattern, never its concrete path. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        const route = req.routePath ?? 'unmatched';
        this.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
        end({ method: req.method, route });
      });
      next();
    };
  }
}
