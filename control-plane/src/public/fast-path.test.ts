import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { livePassport, publish } from '@dpp/testkit/passports';
import { labelKey } from './cache.js';
import {
  HttpPrintDevice,
  enrollTestDevice,
  httpCaller,
  printableProduct,
  startTestControlPlane,
  testDialects,
  type ApiCaller,
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

const CERTIFICATION_INFO = 'https://gs1.org/voc/certificationInfo';

/** The longest PUBLIC_CACHE_MAX_AGE_MS allowed: past it, no replica answers from before a change. */
const MAX_AGE_BOUND_MS = 1_000;

/** How many resolver answers of this status the metrics have counted. */
async function resolverAnswersCounted(t: TestControlPlane, status: number): Promise<number> {
  const m = await t.call('GET', '/metrics');
  const line = m.text
    .split('\n')
    .find((l) =>
      l.startsWith(`dpp_http_requests_total{method="GET",route="/01/{gtin}/21/{serial}",status="${status}"}`),
    );
  return Number(line?.split(' ').at(-1) ?? 0);
}

/** The public answers the metrics have counted, by where they came from. */
async function publicAnswersCounted(t: TestControlPlane): Promise<Record<string, number>> {
  const m = await t.call('GET', '/metrics');
  const counts: Record<string, number> = { cache: 0, shared: 0, lookup: 0 };
  for (const l of m.text.split('\n')) {
    const match = /^dpp_public_answers_total\{source="(\w+)"\} (\d+)$/.exec(l);
    if (match) counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

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
    const count = () => resolverAnswersCounted(t, 302);
    const before = await count();
    const answeredBefore = await publicAnswersCounted(t);
    for (let i = 0; i < 3; i++) await t.call('GET', path);
    expect(await count()).toBe(before + 3);
    // Each answer is counted once, from the cache or looked up (the entry may expire between two scans).
    const answered = await publicAnswersCounted(t);
    const total = (c: Record<string, number>) => c.cache! + c.shared! + c.lookup!;
    expect(total(answered)).toBe(total(answeredBefore) + 3);
    expect(answered.cache).toBeGreaterThan(answeredBefore.cache!);
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

  /** A product with `count` labels queued for printing, and an enrolled device to print them. */
  async function labelsToPrint(count: number) {
    const p = await printableProduct(t.call, key(), count);
    for (const serial of p.serials) {
      const job = await t.call('POST', '/api/v2/aidc/jobs', { key: key(), body: { gtin: p.gtin, serial } });
      expect(job.status, job.text).toBe(201);
    }
    const device = await new HttpPrintDevice(t.call, await enrollTestDevice(t, key())).init();
    return { ...p, device };
  }

  it("keeps every other answer while the print floor claims and seals; a sealed label's answer shows its proof at once", async () => {
    const p = await labelsToPrint(2);
    const scan = (serial: string) => t.call('GET', `/01/${p.gtin}/21/${serial}`);
    for (const serial of p.serials)
      expect((await scan(serial)).headers.get('link')).not.toContain(CERTIFICATION_INFO);
    const invalidated = vi.spyOn(t.cp.built.publicCache, 'invalidate');
    try {
      const thrownAway = () =>
        invalidated.mock.calls.map(([what]) => what).filter((w) => w !== undefined && w.length !== 0);
      // One result at a time: the claim and the results before SEALED throw nothing away.
      const first = (await p.device.claim())!;
      await p.device.seal(first);
      expect(thrownAway()).toEqual([[{ gtin: p.gtin, serial: first.job.serial }]]);
      expect((await scan(first.job.serial)).headers.get('link')).toContain(CERTIFICATION_INFO);
      // Claimed and sealed in batches.
      const [second] = await p.device.claimMany([{ name: 'zebra-1', count: 1 }]);
      await p.device.sealMany([second!]);
      expect(thrownAway()).toEqual([
        [{ gtin: p.gtin, serial: first.job.serial }],
        [{ gtin: p.gtin, serial: second!.job.serial }],
      ]);
      expect((await scan(second!.job.serial)).headers.get('link')).toContain(CERTIFICATION_INFO);
      // Any other write throws everything away.
      const voided = await t.call('POST', `/api/v2/products/${p.productId}/void`, {
        key: key(),
        body: { reason: 'Destroyed in a fire' },
      });
      expect(voided.status).toBe(200);
      expect(thrownAway().at(-1)).toBe('any');
    } finally {
      invalidated.mockRestore();
    }
  });

  it.runIf(dialect === 'postgres')(
    'tells another replica which labels were sealed, and it keeps the rest',
    async () => {
      const p = await labelsToPrint(2);
      const replica = await t.replica();
      const dropLabels = vi.spyOn(replica.built.publicCache, 'dropLabels');
      const dropAll = vi.spyOn(replica.built.publicCache, 'dropAll');
      const sealNext = async () => {
        const [claimed] = await p.device.claimMany([{ name: 'zebra-1', count: 1 }]);
        await p.device.sealMany([claimed!]);
        const label = labelKey({ gtin: p.gtin, serial: claimed!.job.serial });
        await vi.waitFor(() => expect(dropLabels).toHaveBeenCalledWith([label]), { timeout: 10_000 });
        return claimed!.job.serial;
      };
      try {
        // Notices arrive in the order they were sent: once the first seal's has, every earlier one has too.
        await sealNext();
        dropAll.mockClear();
        const serial = await sealNext();
        expect(dropAll).not.toHaveBeenCalled();
        const proof = await httpCaller(replica.url)('GET', `/01/${p.gtin}/21/${serial}`);
        expect(proof.headers.get('link')).toContain(CERTIFICATION_INFO);
      } finally {
        dropLabels.mockRestore();
        dropAll.mockRestore();
      }
    },
  );

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

/** Express's app hands every request to its `handle` (not in its type declarations). */
type ExpressApp = { handle: (req: unknown, res: unknown, next?: unknown) => void };
const requestsOf = (app: unknown) => vi.spyOn(app as ExpressApp, 'handle');

/** A request and the status expected: [method, path, headers, status]. */
type Case = [string, string, Record<string, string>, number];

describe.each(
  testDialects().flatMap((dialect) => [
    { dialect, cache: 'on', maxAgeMs: 500 },
    { dialect, cache: 'off', maxAgeMs: 0 },
  ]),
)('public answers looked up by the fast path ($dialect, cache $cache)', ({ dialect, maxAgeMs }) => {
  let t: TestControlPlane;
  let n = 7_300;
  let live: { id: string; gtin: string; serial: string };
  let voided: { id: string; gtin: string; serial: string };
  /** The same app with nothing in front of it: Express answers every request. */
  let express: { call: ApiCaller; host: string; close: () => void };
  /** How many requests reached Express. */
  let expressed: () => number;

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      env: { IP_RATE_LIMITS: 'public=1000/60' },
      config: { publicCacheMaxAgeMs: maxAgeMs },
    });
    const key = t.tenants.a.admin;
    const keyOf = (p: { id: string; body: Record<string, unknown> }) => ({
      id: p.id,
      gtin: p.body.gtin as string,
      serial: p.body.serialNumber as string,
    });
    live = keyOf(await livePassport(t, key, ++n));
    voided = keyOf(await livePassport(t, key, ++n));
    const v = await t.call('POST', `/api/v2/products/${voided.id}/void`, {
      key,
      body: { reason: 'Destroyed in a fire' },
    });
    expect(v.status).toBe(200);
    const app = t.cp.built.app;
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    express = { call: httpCaller(`http://${host}`), host, close: () => server.close() };
    const handle = requestsOf(app);
    expressed = () => handle.mock.calls.length;
  });
  afterAll(async () => {
    express?.close();
    await t?.close();
  });

  /** Asks the fast path, then Express alone, each on an empty cache; returns both answers. */
  async function both(method: string, path: string, headers: Record<string, string>) {
    t.cp.built.publicCache.dropAll();
    const before = expressed();
    const fast = await t.call(method, path, { headers });
    const reachedExpress = expressed() > before;
    const stored = t.cp.built.publicCache.size;
    t.cp.built.publicCache.dropAll();
    const viaExpress = await express.call(method, path, { headers });
    return { fast, viaExpress, reachedExpress, stored };
  }

  function expectSameAnswer(fast: CallResult, viaExpress: CallResult, what: string) {
    // The one difference the two servers make by design: the Host the client sent, in absolute links.
    const sameHost = (text: string) => text.replaceAll(express.host, new URL(t.url).host);
    const expected = comparable(viaExpress);
    expected.headers = Object.fromEntries(Object.entries(expected.headers).map(([k, v]) => [k, sameHost(v)]));
    expect(comparable(fast), what).toEqual({ ...expected, text: sameHost(expected.text) });
    // One budget for both, when the answer spends it: Express's answer came next.
    const left = fast.headers.get('x-ratelimit-remaining');
    expect(viaExpress.headers.get('x-ratelimit-remaining'), what).toBe(
      left === null ? null : String(Number(left) - 1),
    );
  }

  it('answers a lookup itself exactly as Express answers it, successes and errors alike', async () => {
    const resolver = `/01/${live.gtin}/21/${live.serial}`;
    const read = `/api/v2/public/passport/${live.id}`;
    const cases: Case[] = [
      ['GET', `${resolver}?utm_source=label`, {}, 302],
      ['HEAD', resolver, {}, 302],
      ['GET', `${resolver}/`, { Accept: 'text/html,application/xhtml+xml' }, 302],
      ['GET', resolver, { Accept: 'application/linkset+json' }, 200],
      ['GET', `${resolver}?linkType=all`, {}, 200],
      ['GET', resolver, { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' }, 302],
      ['GET', read, {}, 200],
      ['HEAD', read, {}, 200],
      ['GET', `/api/v2/public/passport/01${live.gtin}21${live.serial}`, {}, 200],
      ['GET', read, { 'X-Forwarded-For': '203.0.113.9, 10.0.0.1' }, 200],
      // Errors: JSON, since these clients do not prefer a page.
      ['GET', `/01/${live.gtin}/21/UNKNOWN-${n}`, {}, 404],
      ['GET', `/01/${live.gtin}/21/UNKNOWN-${n}`, { Accept: 'application/json' }, 404],
      ['HEAD', `/01/${live.gtin}/21/UNKNOWN-${n}`, {}, 404],
      ['GET', `/01/09506000000015/21/${live.serial}`, {}, 404],
      ['GET', `/01/09506000134353/21/${live.serial}`, {}, 400],
      ['GET', `/01/${voided.gtin}/21/${voided.serial}`, {}, 410],
      ['GET', `/api/v2/public/passport/${voided.id}`, {}, 410],
      ['GET', '/api/v2/public/passport/01a219ac-eeb6-703d-ab41-c7869820d062', {}, 404],
      ['HEAD', `/api/v2/public/passport/${voided.id}`, {}, 410],
    ];
    for (const [method, path, headers, status] of cases) {
      const what = `${method} ${path} ${JSON.stringify(headers)}`;
      const { fast, viaExpress, reachedExpress, stored } = await both(method, path, headers);
      expect(fast.status, what).toBe(status);
      expect(reachedExpress, `${what} reached Express`).toBe(false);
      // Successes are kept when the cache is on; errors never are.
      expect(stored, `${what} was stored`).toBe(maxAgeMs > 0 && status < 400 ? 1 : 0);
      expectSameAnswer(fast, viaExpress, what);
    }
  });

  it.runIf(maxAgeMs === 0)('counts every answer as a lookup of its own when the cache is off', async () => {
    const before = await publicAnswersCounted(t);
    for (let i = 0; i < 3; i++) await t.call('GET', `/01/${live.gtin}/21/${live.serial}`);
    await t.call('GET', `/api/v2/public/passport/${live.id}`);
    expect(await publicAnswersCounted(t)).toEqual({ ...before, lookup: before.lookup! + 4 });
  });

  it("echoes the caller's correlation id on a lookup and counts it in the metrics", async () => {
    const path = `/01/${voided.gtin}/21/${voided.serial}`;
    const count = () => resolverAnswersCounted(t, 410);
    const before = await count();
    const r = await t.call('GET', path, { headers: { 'X-Correlation-Id': 'scan-43' } });
    expect(r.headers.get('x-correlation-id')).toBe('scan-43');
    await t.call('GET', path);
    expect(await count()).toBe(before + 2);
  });

  it('leaves to Express what Express answers otherwise: a page for a browser, a credential, a conditional GET', async () => {
    const gone = `/01/${voided.gtin}/21/${voided.serial}`;
    const cases: Case[] = [
      ['GET', gone, { Accept: 'text/html,application/xhtml+xml' }, 410],
      ['GET', `/01/${live.gtin}/21/UNKNOWN-${n}`, { Accept: 'text/html' }, 404],
      ['GET', `/01/${live.gtin}/21/${live.serial}`, { Authorization: 'Bearer not-a-key' }, 302],
      // fetch sends Cache-Control: no-cache with a conditional header unless told otherwise.
      [
        'GET',
        `/api/v2/public/passport/${live.id}`,
        { 'If-None-Match': '*', 'Cache-Control': 'max-age=0' },
        304,
      ],
      ['GET', '/api/v2/public/passport/%E0%A4%A', {}, 404],
    ];
    for (const [method, path, headers, status] of cases) {
      const what = `${method} ${path} ${JSON.stringify(headers)}`;
      const { fast, viaExpress, reachedExpress } = await both(method, path, headers);
      expect(fast.status, what).toBe(status);
      expect(reachedExpress, `${what} reached Express`).toBe(true);
      expectSameAnswer(fast, viaExpress, what);
    }
  });

  it.runIf(dialect === 'sqlite')(
    'shows a void and a republish on the next lookup, with no cache to wait for',
    async () => {
      const p = await livePassport(t, t.tenants.a.admin, ++n);
      const read = `/api/v2/public/passport/${p.id}`;
      expect((await t.call('GET', read)).body.version.version).toBe(1);
      expect((await publish(t, t.tenants.a.admin, p.id)).status).toBe(201);
      expect((await t.call('GET', read)).body.version.version).toBe(2);
      const resolver = `/01/${p.body.gtin as string}/21/${p.body.serialNumber as string}`;
      expect((await t.call('GET', resolver)).status).toBe(302);
      const v = await t.call('POST', `/api/v2/products/${p.id}/void`, {
        key: t.tenants.a.admin,
        body: { reason: 'Destroyed in a fire' },
      });
      expect(v.status).toBe(200);
      expect((await t.call('GET', resolver)).status).toBe(410);
      expect((await t.call('GET', read)).status).toBe(410);
    },
  );

  it('refuses a client past its public budget through Express (429), each forwarded client on its own', async () => {
    const s = await startTestControlPlane({
      dialect,
      env: { IP_RATE_LIMITS: 'public=3/60' },
      config: { publicCacheMaxAgeMs: maxAgeMs },
    });
    try {
      const p = await livePassport(s, s.tenants.a.admin, ++n);
      const handle = requestsOf(s.cp.built.app);
      const paths = [`/api/v2/public/passport/${p.id}`, `/01/${p.body.gtin as string}/21/UNKNOWN-${n}`];
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        s.cp.built.publicCache.dropAll();
        statuses.push((await s.call('GET', paths[i % 2]!)).status);
      }
      expect(statuses).toEqual([200, 404, 200, 429]);
      // Only the refusal went through Express.
      expect(handle).toHaveBeenCalledTimes(1);
      const refused = await s.call('GET', paths[1]!);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      expect(refused.headers.get('retry-after')).not.toBeNull();
      const as = (ip: string) => s.call('GET', paths[0]!, { headers: { 'X-Forwarded-For': ip } });
      const forwarded = [];
      for (let i = 0; i < 4; i++) forwarded.push((await as('203.0.113.7')).status);
      expect(forwarded).toEqual([200, 200, 200, 429]);
      expect((await as('203.0.113.8')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
