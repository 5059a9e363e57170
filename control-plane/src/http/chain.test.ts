import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';

describe('the request path', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ env: { RATE_LIMITS: 'free=3/60' } });
  });
  afterAll(() => t.close());

  it('answers 404 without a code for an unknown route', async () => {
    const r = await t.call('GET', '/api/v2/nope', { key: t.tenants.a.admin });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBeUndefined();
  });

  it('answers 405 with Allow for a known path with a wrong verb', async () => {
    const r = await t.call('DELETE', '/api/v2/api-keys', { key: t.tenants.a.admin });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD');
    expect(r.body.error.code).toBeUndefined();
    const sub = await t.call('GET', `/api/v2/api-keys/${randomUUID()}/revoke`);
    expect(sub.status).toBe(405);
    expect(sub.headers.get('allow')).toBe('POST');
  });

  it('echoes X-Correlation-Id, generates one when absent, and writes it to the audit log', async () => {
    const given = `test-${randomUUID()}`;
    const list = await t.call('GET', '/api/v2/api-keys', {
      key: t.tenants.a.admin,
      headers: { 'X-Correlation-Id': given },
    });
    expect(list.headers.get('x-correlation-id')).toBe(given);
    const generated = await t.call('GET', '/healthz');
    expect(generated.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    const id = list.body.data.find((k: { name: string }) => k.name === 'no-scopes').id as string;
    const r = await t.call('POST', `/api/v2/api-keys/${id}/revoke`, {
      key: t.tenants.a.admin,
      headers: { 'X-Correlation-Id': given },
    });
    expect(r.headers.get('x-correlation-id')).toBe(given);
    const rows = await t.cp.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('correlation_id', '=', given)
      .execute();
    expect(rows.map((x) => x.action)).toEqual(['api_key.revoked']);
  });

  it('answers 429 RATE_LIMITED with the rate headers once the tier budget is spent', async () => {
    const seen = [];
    for (let i = 0; i < 4; i++)
      seen.push(await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin }));
    expect(seen.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(seen[0]!.headers.get('x-ratelimit-limit')).toBe('3');
    expect(seen[0]!.headers.get('x-ratelimit-remaining')).toBe('2');
    const limited = seen[3]!;
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another tenant has its own budget.
    expect((await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin })).status).toBe(200);
  });

  it('refuses a body that is not JSON with 400 VALIDATION_ERROR, and non-JSON media with 415', async () => {
    const id = randomUUID();
    const bad = await t.call('POST', `/api/v2/api-keys/${id}/revoke`, {
      key: t.tenants.a.admin,
      body: '{oops',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('serves liveness, readiness and Prometheus metrics', async () => {
    expect((await t.call('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await t.call('GET', '/readyz')).body).toEqual({ status: 'ok' });
    const m = await t.call('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toContain('dpp_http_requests_total{method="GET",route="/api/v2/api-keys"');
    expect(m.text).toContain('dpp_outbox_backlog');
    // SQLite's checkpointer (this control plane's store is a SQLite file).
    expect(m.text).toMatch(/^dpp_sqlite_wal_pages \d+$/m);
    expect(m.text).toMatch(/^dpp_sqlite_quiet_checkpoints_total \d+$/m);
    expect(m.text).toMatch(/^dpp_sqlite_quiet_checkpoint_seconds_total [\d.e-]+$/m);
  });
});

describe('graceful shutdown', () => {
  it('finishes a request in flight, then refuses new connections', async () => {
    const t = await startTestControlPlane();
    const { port } = new URL(t.url);
    const body = JSON.stringify({});
    const response = new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/api/v2/api-keys/${randomUUID()}/revoke`,
          headers: {
            authorization: `Bearer ${t.tenants.a.admin}`,
            'content-type': 'application/json',
            'content-length': String(body.length),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 1)); // the request is now in flight, its body unfinished
      setTimeout(() => {
        const closed = t.close();
        setTimeout(() => req.end(body.slice(1)), 200);
        void closed;
      }, 100);
    });
    expect(await response).toBe(404); // it ran to completion: an unknown key id
    await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  });
});

describe('malformed input in the path', () => {
  it('answers 400 VALIDATION_ERROR, never 500, for a path that does not percent-decode', async () => {
    const t = await startTestControlPlane();
    try {
      const r = await t.call('GET', '/api/v2/api-keys/%E0%A4%A', { key: t.tenants.a.admin });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    } finally {
      await t.close();
    }
  });
});
