import { z } from 'zod';
import { publicRoute, type RouteDef } from '../http/route.js';
import type { Metrics } from './metrics.js';

export interface HealthDeps {
  metrics: Metrics;
  /** Resolves when the store answers; rejects otherwise. */
  ping: () => Promise<void>;
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
      responses: {
        200: { description: 'Ready', schema: Status },
        503: { description: 'Not ready', schema: Status },
      },
      handler: async () => {
        if (deps.isShuttingDown())
          return { status: 503, body: { status: 'unavailable', reason: 'shutting down' } };
        try {
          await deps.ping();
          return { status: 200, body: { status: 'ok' } };
        } catch {
          return { status: 503, body: { status: 'unavailable', reason: 'store unreachable' } };
        }
      },
    }),
    publicRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      tags: ['Operations'],
      auth: 'none',
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
