import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { livePassport, publish } from '@dpp/testkit/passports';
import {
  httpCaller,
  startTestControlPlane,
  testDialects,
  type CallResult,
  type TestControlPlane,
} from '@dpp/testkit';

/** What differs between two answers by design: the clock, the correlation id, the budget left. */
const PER_REQUEST = new Set([
  'date',
  'x-correlation-id',
  'x-ratelimit-remaining',
  'keep-alive',
  'connection',
]);

function comparable(r: CallResult) {
  const headers = Object.fromEntries([...r.headers.entries()].filter(([k]) => !PER_REQUEST.has(k)));
  return { status: r.status, headers, text: r.text };
}

/** The longest PUBLIC_CACHE_MAX_AGE_MS allowed: past it, no replica answers from before a change. */
const MAX_AGE_BOUND_MS = 1_000;

describe.each(testDialects())('public answers from the cache and the fast path (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 7_100;
  const key = () => t.tenants.a.admin;
  let live: { id: string; gtin: string; serial: string };
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { IP_RATE_LIMITS: 'public=1000/60' } });
    const p = await livePassport(t, key(), ++n);
    live = { id: p.id, gtin: p.body.gtin as string, serial: p.body.serialNumber as string };
  });
  afterAll(() => t?.close());

  it('answers a repeated request exactly as Express answered the first (GET, HEAD, forwarded, linkset)', async () => {
    const resolver = `/01/${live.gtin}/21/${live.serial}?utm_source=label`;
    const cases: [string, string, Record<string, string>][] = [
      ['GET', resolver, {}],
      ['HEAD', resolver, {}],
      ['GET', resolver, { 'X-Forwarded-Proto': 'https' }],
      ['GET', resolver, { Accept: 'application/linkset+json' }],
      ['GET', `/01/${live.gtin}/21/${live.serial}?linkType=all`, {}],
      ['GET', `/api/v2/public/passport/${live.id}`, {}],
      ['HEAD', `/api/v2/public/passport/${live.id}`, {}],
    ];
    for (const [method, path, headers] of cases) {
      t.cp.built.publicCache.dropAll();
      const first = await t.call(method, path, { headers });
      if (headers['X-Forwarded-Proto'] && path.startsWith('/01/'))
        expect(first.headers.get('link')).toMatch(/^<https:\/\//);
      expect(t.cp.built.publicCache.size, `${method} ${path} was stored`).toBe(1);
      const second = await t.call(method, path, { headers });
      expect(comparable(second), `${method} ${path} ${JSON.stringify(headers)}`).toEqual(comparable(first));
      expect(second.headers.get('x-correlation-id')).not.toBe(first.headers.get('x-correlation-id'));
      expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(
        Number(first.headers.get('x-ratelimit-remaining')) - 1,
      );
    }
  });

  it("echoes the caller's correlation id and counts every answer in the metrics", async () => {
    const path = `/01/${live.gtin}/21/${live.serial}`;
    await t.call('GET', path);
    const r = await t.call('GET', path, { headers: { 'X-Correlation-Id': 'scan-42' } });
    expect(r.headers.get('x-correlation-id')).toBe('scan-42');
    const count = async () => {
      const m = await t.call('GET', '/metrics');
      const line = m.text
        .split('\n')
        .find((l) =>
          l.startsWith('dpp_http_requests_total{method="GET",route="/01/{gtin}/21/{serial}",status="302"}'),
        );
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const before = await count();
    for (let i = 0; i < 3; i++) await t.call('GET', path);
    expect(await count()).toBe(before + 3);
  });

  it('shows a void and a republish at once on this replica', async () => {
    const p = await livePassport(t, key(), ++n);
    const gtin = p.body.gtin as string;
    const serial = p.body.serialNumber as string;
    const read = `/api/v2/public/passport/${p.id}`;
    for (let i = 0; i < 2; i++) expect((await t.call('GET', read)).body.version.version).toBe(1);
    expect((await publish(t, key(), p.id)).status).toBe(201);
    expect((await t.call('GET', read)).body.version.version).toBe(2);

    const resolver = `/01/${gtin}/21/${serial}`;
    for (let i = 0; i < 2; i++) expect((await t.call('GET', resolver)).status).toBe(302);
    const voided = await t.call('POST', `/api/v2/products/${p.id}/void`, {
      key: key(),
      body: { reason: 'Destroyed in a fire' },
    });
    expect(voided.status).toBe(200);
    const r = await t.call('GET', resolver);
    expect(r.status).toBe(410);
    expect(r.headers.get('x-dpp-gone-reason')).toBe('serial_voided');
  });

  it.runIf(dialect === 'postgres')(
    'shows a void and a republish on another replica within the cache bound',
    async () => {
      const p = await livePassport(t, key(), ++n);
      const replica = await t.replica();
      const other = httpCaller(replica.url);
      const read = `/api/v2/public/passport/${p.id}`;
      const resolver = `/01/${p.body.gtin as string}/21/${p.body.serialNumber as string}`;
      // The other replica has both answers in its cache.
      for (let i = 0; i < 2; i++) {
        expect((await other('GET', read)).body.version.version).toBe(1);
        expect((await other('GET', resolver)).status).toBe(302);
      }
      expect((await publish(t, key(), p.id)).status).toBe(201);
      await sleep(MAX_AGE_BOUND_MS);
      expect((await other('GET', read)).body.version.version).toBe(2);
      expect((await other('GET', resolver)).status).toBe(302);

      expect((await other('GET', resolver)).status).toBe(302);
      expect(replica.built.publicCache.size).toBeGreaterThan(0);
      const voided = await t.call('POST', `/api/v2/products/${p.id}/void`, {
        key: key(),
        body: { reason: 'Destroyed in a fire' },
      });
      expect(voided.status).toBe(200);
      // The write's NOTIFY empties the other replica's cache (entries leave only so while it gets no request).
      await vi.waitFor(() => expect(replica.built.publicCache.size).toBe(0), { timeout: 10_000 });
      await sleep(MAX_AGE_BOUND_MS);
      const gone = await other('GET', resolver);
      expect(gone.status).toBe(410);
      expect(gone.headers.get('x-dpp-gone-reason')).toBe('serial_voided');
      expect((await other('GET', read)).status).toBe(410);
    },
  );

  it.runIf(dialect === 'sqlite')(
    "spends the client's public budget on cached answers too, and refuses past it",
    async () => {
      const s = await startTestControlPlane({ env: { IP_RATE_LIMITS: 'public=3/60' } });
      try {
        const p = await livePassport(s, s.tenants.a.admin, ++n);
        const path = `/api/v2/public/passport/${p.id}`;
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await s.call('GET', path)).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        const refused = await s.call('GET', path);
        expect(refused.body.error.code).toBe('RATE_LIMITED');
        expect(refused.headers.get('access-control-allow-origin')).toBe('*');
        expect(refused.headers.get('retry-after')).not.toBeNull();
        // Behind a trusted proxy (loopback), each forwarded client has its own budget.
        const as = (ip: string) => s.call('GET', path, { headers: { 'X-Forwarded-For': ip } });
        const forwarded = [];
        for (let i = 0; i < 4; i++) forwarded.push((await as('203.0.113.7')).status);
        expect(forwarded).toEqual([200, 200, 200, 429]);
        expect((await as('203.0.113.8')).status).toBe(200);
      } finally {
        await s.close();
      }
    },
  );
});
