import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config/index.js';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { command, generated, keyWith, livePassport, readyProduct } from '@dpp/testkit/passports';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A real registry endpoint on 127.0.0.1: records each POST; /fail answers 500. */
async function receiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(data) as Record<string, unknown>,
      });
      res.statusCode = req.url?.startsWith('/fail') ? 500 : 202;
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('REGISTRY_CONNECTORS configuration', () => {
  const base = { DPP_ENV: 'test' };
  it('reads NAME=url pairs (upper-case names of CATENA_X, GS1, EBSI)', () => {
    const c = loadConfig({
      ...base,
      REGISTRY_CONNECTORS: 'GS1=http://127.0.0.1:9/gs1, EBSI=https://ebsi.example/dpp',
    });
    expect(c.registryConnectors).toEqual({ GS1: 'http://127.0.0.1:9/gs1', EBSI: 'https://ebsi.example/dpp' });
    expect(loadConfig(base).registryConnectors).toEqual({});
  });
  it.each([
    ['gs1=https://x.example', /unknown registry "gs1"/],
    ['GS1=https://x.example,GS1=https://y.example', /configured twice/],
    ['GS1', /expected NAME=url/],
    ['EBSI=ftp://x.example', /must use http: or https:/],
  ])('refuses %s naming the variable', (value, message) => {
    expect(() => loadConfig({ ...base, REGISTRY_CONNECTORS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REGISTRY_CONNECTORS: value })).toThrow(message);
  });
  it('production only accepts https connectors', () => {
    expect(() => loadConfig({ DPP_ENV: 'production', REGISTRY_CONNECTORS: 'GS1=http://x.example' })).toThrow(
      /REGISTRY_CONNECTORS: must use https:/,
    );
  });
});

describe.each(testDialects())('POST /api/v2/passports/{id}/publish with no connector (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  it('answers 503 REGISTRY_UNAVAILABLE', async () => {
    const p = await livePassport(t, t.tenants.a.admin, 1);
    const r = await t.call('POST', `/api/v2/passports/${p.id}/publish`, { key: t.tenants.a.admin, body: {} });
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: { configured: [] } });
  });
});

describe.each(testDialects())(
  'POST /api/v2/passports/{id}/publish to configured registries (%s)',
  (dialect) => {
    let t: TestControlPlane;
    let rx: Awaited<ReturnType<typeof receiver>>;
    let n = 700;
    const key = () => t.tenants.a.admin;
    beforeAll(async () => {
      rx = await receiver();
      t = await startTestControlPlane({
        dialect,
        env: {
          REGISTRY_CONNECTORS: `GS1=${rx.url}/gs1,EBSI=${rx.url}/ebsi,CATENA_X=${rx.url}/fail/catena-x`,
        },
      });
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    const broadcast = (id: string, body: unknown, k = key()) =>
      t.call('POST', `/api/v2/passports/${id}/publish`, { key: k, body });

    async function publishedPassport(): Promise<string> {
      const p = await livePassport(t, key(), ++n);
      for (const c of ['SUBMIT', 'APPROVE']) await command(t, p.id, c);
      await command(t, p.id, 'PUBLISH', { disclosureTier: 'public' });
      return p.id;
    }

    it('sends the passport JSON only to the chosen registries, and reports each answer', async () => {
      const id = await publishedPassport();
      rx.received.length = 0;
      const r = await broadcast(id, { registries: ['GS1'] });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ passportUid: id, registries: ['GS1'], accepted: 1, failed: 0 });
      expect(r.body.results).toEqual([{ registry: 'GS1', status: 'accepted', httpStatus: 202, error: null }]);
      expect(rx.received.map((x) => x.path)).toEqual(['/gs1']);
      const sent = rx.received[0]!;
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.headers['x-dpp-broadcast-id']).toBe(r.body.broadcastId);
      expect(sent.body).toMatchObject({ registry: 'GS1', passportUid: id, version: 1 });
      expect((sent.body.passport as { content: Record<string, unknown> }).content.product).toBeDefined();
    });

    it('sends to every configured registry when none is chosen; a failing one is reported, not fatal', async () => {
      const id = await publishedPassport();
      rx.received.length = 0;
      const r = await broadcast(id, { passportData: { custom: true } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ accepted: 2, failed: 1 });
      expect(r.body.results.find((x: { registry: string }) => x.registry === 'CATENA_X')).toMatchObject({
        status: 'failed',
        httpStatus: 500,
      });
      expect(rx.received.map((x) => x.path).sort()).toEqual(['/ebsi', '/fail/catena-x', '/gs1']);
      expect(rx.received.every((x) => (x.body.passport as { custom?: boolean }).custom === true)).toBe(true);
      const log = await t.call('GET', `/api/v2/passports/${id}/lifecycle-log`, { key: key() });
      expect(log.body.entries.map((e: { type: string }) => e.type)).toContain('REGISTRY_BROADCAST');
    });

    it('is 422 PASSPORT_NOT_PUBLISHABLE unless approved or published in the command lifecycle', async () => {
      const draft = await livePassport(t, key(), ++n);
      const r = await broadcast(draft.id, {});
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'PASSPORT_NOT_PUBLISHABLE', details: { state: 'draft' } });
      const notGenerated = await readyProduct(t, key(), ++n);
      expect((await broadcast(notGenerated.id, {})).body.error.code).toBe('PASSPORT_NOT_PUBLISHABLE');
      const approved = await readyProduct(t, key(), ++n);
      await generated(t, key(), approved.id);
      for (const c of ['SUBMIT', 'APPROVE']) await command(t, approved.id, c);
      // Approved with no version: publishable only with passportData.
      expect((await broadcast(approved.id, {})).body.error.code).toBe('PASSPORT_NOT_PUBLISHABLE');
      expect(
        (await broadcast(approved.id, { registries: ['EBSI'], passportData: { draft: 1 } })).status,
      ).toBe(200);
    });

    it('validates registries upper case (lower case is 400) and refuses one with no connector with 503', async () => {
      const id = await publishedPassport();
      const lower = await broadcast(id, { registries: ['gs1'] });
      expect(lower.status).toBe(400);
      expect(lower.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'registries[0]' },
      });
      const t2 = await startTestControlPlane({ dialect, env: { REGISTRY_CONNECTORS: `GS1=${rx.url}/gs1` } });
      try {
        const p = await livePassport(t2, t2.tenants.a.admin, 1);
        const r = await t2.call('POST', `/api/v2/passports/${p.id}/publish`, {
          key: t2.tenants.a.admin,
          body: { registries: ['GS1', 'EBSI'] },
        });
        expect(r.status).toBe(503);
        expect(r.body.error).toMatchObject({
          code: 'REGISTRY_UNAVAILABLE',
          details: { unavailable: ['EBSI'] },
        });
      } finally {
        await t2.close();
      }
    });

    it('needs passports:publish and the mid_market tier; sandbox tenants always get 503 REGISTRY_UNAVAILABLE', async () => {
      const id = await publishedPassport();
      const denied = await broadcast(id, {}, await keyWith(t, ['dpp:edit']));
      expect(denied.body.error).toMatchObject({
        code: 'API_SCOPE_DENIED',
        details: { required: 'passports:publish' },
      });
      expect((await broadcast(id, {}, await keyWith(t, ['passports:publish']))).status).toBe(200);
      const free = await broadcast(id, {}, t.tenants.b.admin);
      expect(free.status).toBe(403);
      expect(free.body.error).toMatchObject({
        code: 'FORBIDDEN',
        details: { requiredTier: 'mid_market', tier: 'free' },
      });
      const sandboxed = await livePassport(t, t.tenants.sandbox.admin, ++n);
      const r = await broadcast(sandboxed.id, {}, t.tenants.sandbox.admin);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: { sandbox: true } });
      expect((await broadcast(id, {}, t.tenants.sandbox.admin)).status).toBe(404);
    });
  },
);
