import { z } from 'zod';
import { publicRoute, type RouteDef } from '../http/index.js';
import type { Metrics } from './metrics.js';

export interface HealthDeps {
  metrics: Metrics;
  /** Resolves when the store answers; rejects otherwise. */
  ping: () => Promise<void>;
  /** A ping that has not answered within this bound counts as unreachable. */
  pingTimeoutMs: number;
  isShuttingDown: () => boolean;
  /** Extra gauges refreshed on each scrape (e.g. the outbox backlog). */
  beforeScrape?: () => Promise<void>;
}

const Status = z.object({ status: z.enum(['ok', 'unavailable']), reason: z.string().optional() });

export function healthRoutes(deps: HealthDeps): RouteDef[] {
  return [
    publicRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'liveness',
      summary: 'Liveness: the process is up',
      tags: ['Operations'],
      auth: 'none',
      rateLimited: false, // probes and scrapers are never throttled
      responses: { 200: { description: 'Alive', schema: Status } },
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    publicRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readiness',
      summary: 'Readiness: migrations done, store reachable, not shutting down',
      tags: ['Operations'],
      auth: 'none',
      rateLimited: false, // probes and scrapers are never throttled
      responses: {
        200: { description: 'Ready', schema: Status },
        503: { description: 'Not ready', schema: Status },
      },
      handler: async () => {
        if (deps.isShuttingDown())
          return { status: 503, body: { status: 'unavailable', reason: 'shutting down' } };
        const answer = await withinBound(deps.ping(), deps.pingTimeoutMs);
        if (answer === 'ok') return { status: 200, body: { status: 'ok' } };
        return {
          status: 503,
          body: {
            status: 'unavailable',
            reason:
              answer === 'timeout'
                ? `store did not answer within ${deps.pingTimeoutMs} ms`
                : 'store unreachable',
          },
        };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      tags: ['Operations'],
      auth: 'none',
      rateLimited: false, // probes and scrapers are never throttled
      responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain' } },
      handler: async () => {
        await deps.beforeScrape?.();
        const text = await deps.metrics.registry.metrics();
        const { Readable } = await import('node:stream');
        return { status: 200, stream: Readable.from([text]), contentType: deps.metrics.registry.contentType };
      },
    }),
  ];
}

/** Whether `ping` settled well within `ms`; a ping that never settles is not waited for. */
async function withinBound(ping: Promise<void>, ms: number): Promise<'ok' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([
      ping.then(
        () => 'ok' as const,
        () => 'failed' as const,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
