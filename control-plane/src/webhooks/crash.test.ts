import { afterEach, describe, expect, it } from 'vitest';
import { outboxBacklog } from '../outbox/index.js';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FAST_TUNING, emitEvent, eventually } from '@dpp/testkit/webhooks';
import { type TestReceiver, startReceiver } from '@dpp/testkit/webhooks';

/**
 * A control plane stopped after an event's transaction committed and before its delivery loses
 * nothing: a new control plane on the same SQLite file or PostgreSQL schema delivers it. The first one
 * runs with its workers off, so it stops at exactly the point a crash would have left.
 */
describe.each(testDialects())('webhook delivery across a restart (%s)', (dialect) => {
  let t: TestControlPlane | undefined;
  let rx: TestReceiver | undefined;
  afterEach(async () => {
    await t?.close();
    await rx?.close();
    t = undefined;
    rx = undefined;
  });

  const subscribe = async (tc: TestControlPlane, url: string) => {
    const r = await tc.call('POST', '/api/v2/webhooks', {
      key: tc.tenants.a.admin,
      body: { url, events: ['print.confirmed'] },
    });
    expect(r.status).toBe(201);
    return r.body.data as { id: string; secret: string };
  };

  it('delivers an event whose outbox row was committed but never dispatched', async () => {
    rx = await startReceiver();
    t = await startTestControlPlane({ dialect, outbox: { start: false }, webhooks: { deliver: false } });
    await subscribe(t, rx.url);
    const eventId = await emitEvent(t, t.tenants.a.id, 'print.confirmed', { serials: ['1', '2'] });
    expect(await outboxBacklog(t.cp.store.db)).toBe(1);
    expect(await t.cp.store.db.selectFrom('webhook_deliveries').select('id').execute()).toEqual([]);

    await t.restart({ webhooks: { tuning: FAST_TUNING } });
    const [got] = await rx.waitFor(1);
    expect(JSON.parse(got!.body)).toMatchObject({
      id: eventId,
      type: 'print.confirmed',
      data: { serials: ['1', '2'] },
    });
  });

  it('delivers, under the delivery id it was queued with, a delivery that was queued but never sent', async () => {
    rx = await startReceiver();
    t = await startTestControlPlane({ dialect, webhooks: { deliver: false } });
    const endpoint = await subscribe(t, rx.url);
    await emitEvent(t, t.tenants.a.id, 'print.confirmed', { serials: ['7'] });
    const tc = t;
    const queued = await eventually(async () => {
      const r = await tc.call('GET', '/api/v2/webhooks/deliveries', { key: tc.tenants.a.admin });
      return r.body.data[0] as { id: string; status: string } | undefined;
    }, 'the queued delivery');
    expect(queued.status).toBe('pending');
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.received).toHaveLength(0);

    await t.restart({ webhooks: { tuning: FAST_TUNING } });
    const [got] = await rx.waitFor(1);
    expect(got!.headers['x-service-delivery-id']).toBe(queued.id);
    const list = await t.call('GET', `/api/v2/webhooks/deliveries?endpointId=${endpoint.id}`, {
      key: t.tenants.a.admin,
    });
    expect(list.body.data).toHaveLength(1);
    expect(rx.received).toHaveLength(1);
  });
});
