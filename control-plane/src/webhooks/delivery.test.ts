import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  WEBHOOK_API_VERSION,
  WebhookVerificationError,
  verifyLegacyWebhookSignature,
  verifyWebhook,
} from '@dpp/shared';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FAST_TUNING, emitEvent, eventually } from '@dpp/testkit/webhooks';
import { type ReceivedRequest, type TestReceiver, startReceiver } from '@dpp/testkit/webhooks';

/** Standard Webhooks, computed here independently of @dpp/shared: base64 HMAC-SHA256 of `id.timestamp.body`. */
function standardWebhooksSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function vectors(): { secret: string; id: string; timestamp: number; body: string; signature: string }[] {
  const dir =
    process.env.DPP_VECTORS_DIR ?? fileURLToPath(new URL('../../../../shared/vectors/', import.meta.url));
  return (JSON.parse(readFileSync(resolve(dir, 'webhooks.json'), 'utf8')) as { vectors: never[] }).vectors;
}

function verificationCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.code;
    throw err;
  }
  return undefined;
}

const header = (r: ReceivedRequest, name: string) => r.headers[name] as string;

describe.each(testDialects())('webhook deliveries to a real receiver (%s)', (dialect) => {
  let t: TestControlPlane;
  let receivers: TestReceiver[] = [];
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, webhooks: { tuning: FAST_TUNING } });
  });
  afterEach(async () => {
    for (const tenant of [t.tenants.a, t.tenants.b]) {
      const list = await t.call('GET', '/api/v2/webhooks?limit=100', { key: tenant.admin });
      for (const e of list.body.data)
        await t.call('DELETE', `/api/v2/webhooks/${e.id}`, { key: tenant.admin });
    }
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });
  afterAll(() => t.close());

  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  const subscribe = async (url: string, events: string[], key = t.tenants.a.admin) => {
    const r = await t.call('POST', '/api/v2/webhooks', { key, body: { url, events } });
    expect(r.status).toBe(201);
    return r.body.data as { id: string; secret: string };
  };
  const deliveriesOf = async (endpointId: string) => {
    const r = await t.call('GET', `/api/v2/webhooks/deliveries?endpointId=${endpointId}`, {
      key: t.tenants.a.admin,
    });
    expect(r.status).toBe(200);
    return r.body.data as {
      id: string;
      status: string;
      eventId: string;
      attempts: {
        attempt: number;
        statusCode: number | null;
        error: string | null;
        durationMs: number;
        trigger: string;
      }[];
    }[];
  };
  const settled = (endpointId: string, status: string) =>
    eventually(async () => {
      const [d] = await deliveriesOf(endpointId);
      return d?.status === status ? d : undefined;
    }, `a ${status} delivery`);

  it('POSTs the envelope signed so that verifyWebhook accepts it, with every contract header', async () => {
    const rx = await receiver();
    const endpoint = await subscribe(`${rx.url}/hooks`, ['product.created']);
    const data = { id: 'p-1', gtin: '09506000134352', category: 'electronics' };
    const eventId = await emitEvent(t, t.tenants.a.id, 'product.created', data);
    const [got] = await rx.waitFor(1);
    const req = got!;
    expect(req.path).toBe('/hooks');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('dpp-webhooks/1');
    expect(header(req, 'x-service-delivery-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(Number(header(req, 'x-service-timestamp')) - Date.now() / 1000)).toBeLessThan(30);
    expect(header(req, 'x-service-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(header(req, 'x-service-signature-v2')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    const envelope = verifyWebhook(req.body, req.headers, endpoint.secret, { toleranceSeconds: 300 });
    expect(envelope).toEqual({
      id: eventId,
      type: 'product.created',
      timestamp: expect.any(String),
      apiVersion: WEBHOOK_API_VERSION,
      data,
    });
    expect(Object.keys(JSON.parse(req.body) as object)).toEqual([
      'id',
      'type',
      'timestamp',
      'apiVersion',
      'data',
    ]);
    expect(() => verifyLegacyWebhookSignature(req.body, req.headers, endpoint.secret)).not.toThrow();

    // The same signature computed independently, and that computation checked against the Standard
    // Webhooks vectors, so the wire format is Standard Webhooks and not merely self-consistent.
    for (const v of vectors()) {
      expect(standardWebhooksSignature(v.secret, v.id, String(v.timestamp), v.body)).toBe(v.signature);
    }
    expect(header(req, 'x-service-signature-v2')).toBe(
      standardWebhooksSignature(
        endpoint.secret,
        header(req, 'x-service-delivery-id'),
        header(req, 'x-service-timestamp'),
        req.body,
      ),
    );

    // Replay window: the same delivery presented 6 minutes later is refused; a changed byte is refused.
    const sixMinutesLater = new Date((Number(header(req, 'x-service-timestamp')) + 360) * 1000);
    expect(
      verificationCode(() => verifyWebhook(req.body, req.headers, endpoint.secret, { now: sixMinutesLater })),
    ).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(
      verificationCode(() => verifyWebhook(req.body.replace('p-1', 'p-2'), req.headers, endpoint.secret)),
    ).toBe('SIGNATURE_MISMATCH');

    const delivered = await settled(endpoint.id, 'delivered');
    expect(delivered.id).toBe(header(req, 'x-service-delivery-id'));
    expect(delivered.eventId).toBe(eventId);
    expect(delivered.attempts).toEqual([
      {
        attempt: 1,
        at: expect.any(String),
        statusCode: 200,
        error: null,
        durationMs: expect.any(Number),
        trigger: 'schedule',
      },
    ]);
  });

  it('fans an event out to each subscribed endpoint of its tenant: one envelope id, one delivery id each', async () => {
    const rx = await receiver();
    await subscribe(`${rx.url}/one`, ['product.created', 'print.failed']);
    await subscribe(`${rx.url}/two`, ['print.failed']);
    await subscribe(`${rx.url}/other-types`, ['carrier.generated']);
    await subscribe(`${rx.url}/other-tenant`, ['print.failed'], t.tenants.b.admin);
    const data = { reportRef: 'r-1', chunks: 1, serials: ['1'], failures: [{ serial: '1', reason: 'jam' }] };
    const eventId = await emitEvent(t, t.tenants.a.id, 'print.failed', data);
    await emitEvent(t, t.tenants.a.id, 'product.updated', { id: 'p-1' });
    const got = await rx.waitFor(2);
    // Give a wrongly fanned-out delivery time to show up before checking that none did.
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/one', '/two']);
    const bodies = got.map((r) => JSON.parse(r.body) as { id: string; data: unknown });
    expect(bodies.map((b) => b.id)).toEqual([eventId, eventId]);
    expect(bodies[0]!.data).toEqual(data);
    expect(new Set(got.map((r) => header(r, 'x-service-delivery-id'))).size).toBe(2);
  });

  it('retries after a 500 with the same delivery id and bytes, newly signed, and stops at the 2xx', async () => {
    const rx = await receiver((_req, i) => (i === 0 ? 500 : 200));
    const endpoint = await subscribe(rx.url, ['carrier.generated']);
    await emitEvent(t, t.tenants.a.id, 'carrier.generated', {
      productId: 'p-1',
      allocated: 2,
      exportPath: '/x',
    });
    const [first, second] = await rx.waitFor(2);
    expect(header(second!, 'x-service-delivery-id')).toBe(header(first!, 'x-service-delivery-id'));
    expect(second!.body).toBe(first!.body);
    expect(verifyWebhook(second!.body, second!.headers, endpoint.secret).type).toBe('carrier.generated');
    const d = await settled(endpoint.id, 'delivered');
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 200]);
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.received).toHaveLength(2);
  });

  it('does not retry after a 400', async () => {
    const rx = await receiver(() => 400);
    const endpoint = await subscribe(rx.url, ['product.deleted']);
    await emitEvent(t, t.tenants.a.id, 'product.deleted', { id: 'p-1' });
    const d = await settled(endpoint.id, 'failed');
    expect(d.attempts.map((a) => a.statusCode)).toEqual([400]);
    // Three retries of 60 ms would all have happened by now.
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.received).toHaveLength(1);
    expect((await deliveriesOf(endpoint.id))[0]!.attempts).toHaveLength(1);
  });

  it('retries a timeout and a 503, and gives up as failed when the schedule is spent', async () => {
    const rx = await receiver((_req, i) => (i === 0 ? { status: 200, delayMs: 2_000 } : 503));
    const endpoint = await subscribe(rx.url, ['product.published']);
    await emitEvent(t, t.tenants.a.id, 'product.published', { id: 'p-1', version: 1 });
    const d = await settled(endpoint.id, 'failed');
    expect(d.attempts).toHaveLength(4);
    expect(d.attempts[0]).toMatchObject({ statusCode: null, error: 'timeout after 400 ms' });
    // The attempt keeps how long it took (sender.test.ts checks the figure on a clock of its own).
    expect(Number.isInteger(d.attempts[0]!.durationMs)).toBe(true);
    expect(d.attempts.slice(1).map((a) => a.statusCode)).toEqual([503, 503, 503]);
    expect(new Set(rx.received.map((r) => header(r, 'x-service-delivery-id'))).size).toBe(1);
  });

  it('after rotate-secret signs only with the new secret; a delivery the receiver rejected is retried by hand', async () => {
    let receiverSecret = '';
    // A receiver as the README shows it: 400 when the signature does not verify.
    const rx = await receiver((req) => {
      try {
        verifyWebhook(req.body, req.headers, receiverSecret);
        return 204;
      } catch {
        return 400;
      }
    });
    const endpoint = await subscribe(rx.url, ['print.confirmed']);
    receiverSecret = endpoint.secret;
    await emitEvent(t, t.tenants.a.id, 'print.confirmed', { serials: ['1'] });
    await settled(endpoint.id, 'delivered');

    const rotated = await t.call('POST', `/api/v2/webhooks/${endpoint.id}/rotate-secret`, {
      key: t.tenants.a.admin,
    });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.data.secret as string;
    await emitEvent(t, t.tenants.a.id, 'print.confirmed', { serials: ['2'] });
    const rejected = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list.find((d) => d.status === 'failed');
    }, 'the delivery the receiver rejected');
    const sent = rx.received[1]!;
    expect(verificationCode(() => verifyWebhook(sent.body, sent.headers, endpoint.secret))).toBe(
      'SIGNATURE_MISMATCH',
    );
    expect(verifyWebhook(sent.body, sent.headers, newSecret).data).toEqual({ serials: ['2'] });

    receiverSecret = newSecret;
    const retry = await t.call('POST', `/api/v2/webhooks/${endpoint.id}/deliveries/${rejected.id}/retry`, {
      key: t.tenants.a.admin,
    });
    expect(retry.status).toBe(202);
    expect(retry.body.data).toMatchObject({ id: rejected.id, status: 'pending' });
    const [, , resent] = await rx.waitFor(3);
    expect(header(resent!, 'x-service-delivery-id')).toBe(rejected.id);
    expect(resent!.body).toBe(sent.body);
    const done = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      const d = list.find((x) => x.id === rejected.id);
      return d?.status === 'delivered' ? d : undefined;
    }, 'the retried delivery');
    expect(done.attempts.map((a) => [a.statusCode, a.trigger])).toEqual([
      [400, 'schedule'],
      [204, 'manual'],
    ]);
  });

  it('refuses a manual retry while the endpoint is disabled (409), and resends a delivered one once re-enabled', async () => {
    const rx = await receiver();
    const endpoint = await subscribe(rx.url, ['approval.completed']);
    await emitEvent(t, t.tenants.a.id, 'approval.completed', { passportId: 'x' });
    const d = await settled(endpoint.id, 'delivered');
    const path = `/api/v2/webhooks/${endpoint.id}/deliveries/${d.id}/retry`;
    await t.call('PATCH', `/api/v2/webhooks/${endpoint.id}`, {
      key: t.tenants.a.admin,
      body: { enabled: false },
    });
    const refused = await t.call('POST', path, { key: t.tenants.a.admin });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBeUndefined();
    await t.call('PATCH', `/api/v2/webhooks/${endpoint.id}`, {
      key: t.tenants.a.admin,
      body: { enabled: true },
    });
    expect((await t.call('POST', path, { key: t.tenants.a.admin })).status).toBe(202);
    const [first, again] = await rx.waitFor(2);
    expect(header(again!, 'x-service-delivery-id')).toBe(header(first!, 'x-service-delivery-id'));
  });

  it('a slow endpoint with a backlog does not hold up a fast one', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 250 }));
    const fast = await receiver();
    await subscribe(slow.url, ['revocation.created']);
    await subscribe(fast.url, ['product.created']);
    for (let i = 0; i < 12; i++) await emitEvent(t, t.tenants.a.id, 'revocation.created', { i });
    await slow.waitFor(1);
    await emitEvent(t, t.tenants.a.id, 'product.created', { id: 'p-fast' });
    await fast.waitFor(1);
    // Two at a time, 250 ms each: the slow backlog needs 1.5 s; the fast delivery did not wait for it.
    expect(slow.received.length).toBeLessThan(12);
    await slow.waitFor(12);
    const concurrent = Math.max(
      ...slow.received.map((r) => slow.received.filter((o) => o.at >= r.at && o.at < r.at + 240).length),
    );
    expect(concurrent).toBeLessThanOrEqual(2);
  });

  it('lists deliveries with filters and cursor paging', async () => {
    const rx = await receiver((req) => (JSON.parse(req.body).type === 'product.deleted' ? 422 : 200));
    const endpoint = await subscribe(rx.url, ['product.created', 'product.deleted']);
    const before = new Date().toISOString();
    await emitEvent(t, t.tenants.a.id, 'product.created', { id: 'a' });
    await emitEvent(t, t.tenants.a.id, 'product.created', { id: 'b' });
    const deletedId = await emitEvent(t, t.tenants.a.id, 'product.deleted', { id: 'a' });
    await rx.waitFor(3);
    await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list.length === 3 && list.every((d) => d.status !== 'pending') ? list : undefined;
    }, 'three settled deliveries');
    const q = (query: string) =>
      t.call('GET', `/api/v2/webhooks/deliveries?endpointId=${endpoint.id}&${query}`, {
        key: t.tenants.a.admin,
      });
    expect((await q('status=failed')).body.data.map((d: { eventId: string }) => d.eventId)).toEqual([
      deletedId,
    ]);
    expect((await q('eventType=product.created')).body.data).toHaveLength(2);
    expect((await q(`eventId=${deletedId}`)).body.data).toHaveLength(1);
    expect((await q(`since=${encodeURIComponent(before)}`)).body.data).toHaveLength(3);
    expect((await q('since=2999-01-01T00:00:00Z')).body.data).toHaveLength(0);
    const first = await q('limit=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.hasMore).toBe(true);
    const second = await q(`limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body).toMatchObject({ hasMore: false, nextCursor: null });
    const all = [...first.body.data, ...second.body.data].map((d: { id: string }) => d.id);
    expect(new Set(all).size).toBe(3);
    const bad = await q('status=lost');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('status');
    const other = await t.call('GET', `/api/v2/webhooks/deliveries?endpointId=${endpoint.id}`, {
      key: t.tenants.b.admin,
    });
    expect(other.body.data).toEqual([]);
  });
});
