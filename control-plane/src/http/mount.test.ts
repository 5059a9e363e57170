import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db, SecretBox } from '../store/index.js';
import { mountRoutes } from './mount.js';
import { RateLimiter } from './rate-limit.js';
import type { RouteDef } from './route.js';

/** A public operation that answers with its own name and the parameters it was given. */
function op(method: RouteDef['method'], path: string, name: string): RouteDef {
  return {
    method,
    path,
    operationId: name,
    summary: name,
    tags: [],
    auth: 'none',
    rateLimited: false,
    responses: { 200: { description: name } },
    handler: async ({ req }) => ({ status: 200, body: { name, params: req.params } }),
  } as RouteDef;
}

async function serve(routes: RouteDef[]): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  const limiter = new RateLimiter({}, Date.now);
  app.use(
    mountRoutes(routes, {
      db: {} as Db,
      secrets: {} as SecretBox,
      authenticators: [],
      limiter,
      ipLimiter: limiter,
      idempotencyTtlHours: 24,
      now: Date.now,
    }),
  );
  app.use((_req, res) => {
    res.status(404).json({ name: 'none' });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('the dispatch of operations by their first path segments', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  // Mounted in this order: where two could match, the one mounted first answers, as one router of all would.
  const routes = [
    op('get', '/healthz', 'health'),
    op('get', '/p/{uid}', 'passport page'),
    op('get', '/api/v2/{section}/status', 'any section status'),
    op('get', '/api/v2/aidc/jobs', 'list jobs'),
    op('get', '/api/v2/aidc/jobs/{ref}', 'one job'),
    op('post', '/api/v2/aidc/jobs/claims', 'claim'),
    op('get', '/api/v2/aidc/status', 'aidc status (after the wide route)'),
    op('get', '/api/v2/products/{id}', 'one product'),
    op('get', '/api/v2/openapi.json', 'openapi'),
  ];

  const answers = async (url: string, method: string, path: string) => {
    const res = await fetch(`${url}${path}`, { method });
    return { status: res.status, ...((await res.json()) as { name: string; params?: unknown }) };
  };

  it('answers every path with the operation one router of all the operations would choose', async () => {
    const server = await serve(routes);
    close = server.close;
    const cases: [string, string, string, Record<string, string>?][] = [
      ['GET', '/healthz', 'health'],
      ['GET', '/healthz/', 'health'],
      ['GET', '/p/abc', 'passport page', { uid: 'abc' }],
      ['GET', '/api/v2/aidc/jobs', 'list jobs'],
      ['GET', '/api/v2/aidc/jobs/', 'list jobs'],
      ['GET', '/api/v2/aidc/jobs/J-1', 'one job', { ref: 'J-1' }],
      ['POST', '/api/v2/aidc/jobs/claims', 'claim'],
      // The route with a parameter in its first segments is mounted before the literal one: it answers.
      ['GET', '/api/v2/aidc/status', 'any section status', { section: 'aidc' }],
      ['GET', '/api/v2/webhooks/status', 'any section status', { section: 'webhooks' }],
      ['GET', '/api/v2/products/p%2F1', 'one product', { id: 'p/1' }],
      ['GET', '/api/v2/openapi.json', 'openapi'],
    ];
    for (const [method, path, name, params] of cases) {
      const got = await answers(server.url, method, path);
      expect({ path, status: got.status, name: got.name }).toEqual({ path, status: 200, name });
      if (params) expect(got.params).toEqual(params);
    }
  });

  it('hands on a path no operation takes, whatever its first segments', async () => {
    const server = await serve(routes);
    close = server.close;
    for (const [method, path] of [
      ['GET', '/api/v2/aidc/nothing/here'],
      ['DELETE', '/api/v2/aidc/jobs'],
      ['GET', '/API/v2/aidc/jobs'],
      ['GET', '/api/v2/aid%63/jobs'],
      ['GET', '/api/v2'],
      ['GET', '/api/v2/'],
      ['GET', '/p/abc/def'],
      ['GET', '/'],
    ] as const) {
      const got = await answers(server.url, method, path);
      expect({ path, method, status: got.status, name: got.name }).toEqual({
        path,
        method,
        status: 404,
        name: 'none',
      });
    }
  });
});

describe('the precedence of first-in-line operations over deferrable ones (http/precedence.ts)', () => {
  it('starts a deferrable operation only once the first-in-line one in progress has ended', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let claimEntered!: () => void;
    const entered = new Promise<void>((r) => (claimEntered = r));
    let claimEnded = 0;
    let resultStarted = 0;
    const claim: RouteDef = {
      ...op('post', '/api/v2/aidc/jobs/claims', 'claim'),
      firstInLine: true,
      handler: async () => {
        claimEntered();
        await held;
        claimEnded = performance.now();
        return { status: 200, body: { name: 'claim' } };
      },
    } as RouteDef;
    const result: RouteDef = {
      ...op('post', '/api/v2/aidc/jobs/results', 'results'),
      deferrable: true,
      handler: async () => {
        resultStarted = performance.now();
        return { status: 200, body: { name: 'results' } };
      },
    } as RouteDef;
    const server = await serve([claim, result]);
    try {
      const post = (path: string) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        }).then((r) => r.status);
      const claimed = post('/api/v2/aidc/jobs/claims');
      await entered;
      const sent = performance.now();
      const reported = post('/api/v2/aidc/jobs/results');
      // Time for the result to reach the gate while the claim is held; then the claim ends.
      await new Promise((r) => setTimeout(r, 30));
      release();
      expect(await claimed).toBe(200);
      expect(await reported).toBe(200);
      // The gate holds a result at most 100 ms for claims (Precedence's maxWaitMs): on a machine stalled that long
      // it may start first, never sooner. Without the gate the result would start at once, while the claim is held.
      const waitedOut = resultStarted - sent >= 100;
      expect(resultStarted > claimEnded || waitedOut).toBe(true);
    } finally {
      await server.close();
    }
  });
});
