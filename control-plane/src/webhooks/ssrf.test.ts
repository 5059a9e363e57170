/**
 * Webhook receivers under the production URL policy: no private, loopback or link-local address, checked
 * when an endpoint is saved and again on every delivery (a name may resolve elsewhere later).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FAST_TUNING, emitEvent, eventually } from '@dpp/testkit/webhooks';
import { type TestReceiver, startReceiver } from '@dpp/testkit/webhooks';

describe.each(testDialects())('webhook SSRF protection with the production URL policy (%s)', (dialect) => {
  let t: TestControlPlane;
  let rx: TestReceiver;
  const dns: Record<string, string> = { 'hooks.example.com': '93.184.216.34' };
  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestControlPlane({
      dialect,
      webhooks: {
        allowPrivateNetworks: false,
        resolve: async (host) => [{ address: dns[host] ?? '0.0.0.0', family: 4 }],
        tuning: { ...FAST_TUNING, retryScheduleMs: [] },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('refuses a loopback receiver on creation with 400 VALIDATION_ERROR naming url', async () => {
    const r = await t.call('POST', '/api/v2/webhooks', {
      key: t.tenants.a.admin,
      body: { url: `${rx.url}/hook`, events: ['product.created'] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'url' } });
    expect(r.body.error.message).toContain('127.0.0.1');
  });

  it('refuses at delivery time a host that resolved publicly when saved and to loopback later', async () => {
    const port = new URL(rx.url).port;
    const created = await t.call('POST', '/api/v2/webhooks', {
      key: t.tenants.a.admin,
      body: { url: `http://hooks.example.com:${port}/hook`, events: ['product.created'] },
    });
    expect(created.status).toBe(201);
    dns['hooks.example.com'] = '127.0.0.1';
    await emitEvent(t, t.tenants.a.id, 'product.created', { id: 'p-1' });
    const d = await eventually(async () => {
      const r = await t.call('GET', '/api/v2/webhooks/deliveries', { key: t.tenants.a.admin });
      const first = r.body.data[0];
      return first?.status === 'failed' ? first : undefined;
    }, 'the refused delivery');
    expect(d.attempts[0].statusCode).toBeNull();
    expect(d.attempts[0].error).toContain('127.0.0.1');
    expect(rx.received).toHaveLength(0);
  });
});
