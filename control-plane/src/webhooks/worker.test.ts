import http from 'node:http';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventType } from '@dpp/shared';
import { recordEvent } from '../events/index.js';
import { OutboxDispatcher } from '../outbox/index.js';
import { SecretBox } from '../store/index.js';
import { insertTenant } from '../tenants/tenants.js';
import { openTestStore, testDialects } from '@dpp/testkit';
import { claimDueDeliveries } from './claim.js';
import { WebhookEndpoints } from './endpoints.js';
import { webhookFanOut } from './fan-out.js';
import { type TestReceiver, startReceiver } from '@dpp/testkit/webhooks';
import { WebhookUrlPolicy } from './url-policy.js';
import { type DeliveryTuning, DeliveryWorker } from './worker.js';

const log = pino({ level: 'silent' });
const secrets = SecretBox.of(undefined);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const actor = { actor: { type: 'system' as const, id: 'test' } };

describe.each(testDialects())('delivery worker with an injected clock (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let rx: TestReceiver;
  let clock: number;
  let tenantId: string;
  let endpoints: WebhookEndpoints;
  let dispatcher: OutboxDispatcher;
  const workers: DeliveryWorker[] = [];

  beforeEach(async () => {
    store = await openTestStore(dialect);
    rx = await startReceiver();
    clock = Date.parse('2026-03-01T00:00:00Z');
    ({ id: tenantId } = await insertTenant(store.db, {
      name: 'T',
      tier: 'free',
      sandbox: false,
      sandboxExpiresAt: null,
    }));
    const policy = new WebhookUrlPolicy({ allowPrivateNetworks: true });
    endpoints = new WebhookEndpoints({ db: store.db, secrets, policy, now: () => clock });
    dispatcher = new OutboxDispatcher({ db: store.db, dialect: store.dialect, log });
    dispatcher.register('event', webhookFanOut({ db: store.db, log, now: () => clock }));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await rx.close();
    await store.drop();
  });

  const worker = (tuning: Partial<DeliveryTuning> = {}) => {
    const w = new DeliveryWorker({
      secrets,
      db: store.db,
      dialect: store.dialect,
      log,
      policy: new WebhookUrlPolicy({ allowPrivateNetworks: true }),
      now: () => clock,
      jitterRatio: 0,
      timeoutMs: 2_000,
      ...tuning,
    });
    workers.push(w);
    return w;
  };
  /** An event as an emitter records it, at the injected clock, then fanned out by the outbox. */
  const emit = async (type: EventType = 'product.updated', data: Record<string, unknown> = {}) => {
    const id = await recordEvent(store.db, {
      tenantId,
      type,
      data,
      occurredAt: new Date(clock).toISOString(),
    });
    while ((await dispatcher.drainOnce()) > 0);
    return id;
  };
  const subscribe = (path = '/') =>
    endpoints.create(tenantId, { url: `${rx.url}${path}`, events: ['product.updated'] }, actor);

  it('disables an endpoint after 3 days of failures with a notice; its deliveries wait until it is re-enabled', async () => {
    rx.respond(() => 500);
    const endpoint = await subscribe();
    await emit();
    const w = worker({ retryScheduleMs: Array(20).fill(HOUR) });
    expect(await w.runOnce()).toBe(1);
    expect((await endpoints.get(tenantId, endpoint.id)).failingSince).toBe(new Date(clock).toISOString());
    const failingSince = clock;

    clock += DAY;
    expect(await w.runOnce()).toBe(1);
    expect((await endpoints.get(tenantId, endpoint.id)).enabled).toBe(true);

    clock = failingSince + 3 * DAY;
    expect(await w.runOnce()).toBe(1);
    const disabled = await endpoints.get(tenantId, endpoint.id);
    expect(disabled).toMatchObject({
      enabled: false,
      disabledReason: 'failing_deliveries',
      disabledAt: new Date(clock).toISOString(),
    });
    const notice = await store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'webhook_endpoint.disabled')
      .executeTakeFirstOrThrow();
    expect(notice).toMatchObject({ tenant_id: tenantId, actor_type: 'system', resource_id: endpoint.id });
    expect(JSON.parse(notice.details!)).toMatchObject({ reason: 'failing_deliveries', lastStatusCode: 500 });

    // Disabled: the held delivery is not attempted, and a new event is not queued for it.
    clock += DAY;
    expect(await w.runOnce()).toBe(0);
    await emit();
    expect(await store.db.selectFrom('webhook_deliveries').select('id').execute()).toHaveLength(1);

    rx.respond(() => 200);
    const enabled = await endpoints.update(tenantId, endpoint.id, { enabled: true }, actor);
    expect(enabled).toMatchObject({
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
    });
    expect(await w.runOnce()).toBe(1);
    const row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'delivered', attempts: 4 });
    expect(rx.received).toHaveLength(4);
  });

  it('a 2xx closes the failure window, so intermittent failures never disable', async () => {
    const answers = [500, 200, 500, 500];
    rx.respond(() => answers.shift() ?? 500);
    const endpoint = await subscribe();
    const w = worker({ retryScheduleMs: [HOUR, HOUR, HOUR] });
    await emit();
    await w.runOnce(); // 500 at day 0
    clock += HOUR;
    await w.runOnce(); // 200
    expect((await endpoints.get(tenantId, endpoint.id)).failingSince).toBeNull();
    clock += 2 * DAY;
    await emit();
    await w.runOnce(); // 500 at day 2: the window opens here
    clock += 2 * DAY;
    await w.runOnce(); // 500 at day 4: open for 2 days only
    expect(await endpoints.get(tenantId, endpoint.id)).toMatchObject({
      enabled: true,
      failingSince: expect.any(String),
    });
  });

  it('schedules retries by the schedule and gives up after the last, keeping every attempt', async () => {
    rx.respond(() => 502);
    await subscribe();
    await emit();
    const w = worker({ retryScheduleMs: [5_000, 30_000] });
    const start = clock;
    expect(await w.runOnce()).toBe(1);
    let row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 1,
      next_attempt_at: new Date(start + 5_000).toISOString(),
    });
    clock += 4_999;
    expect(await w.runOnce()).toBe(0);
    clock += 1;
    expect(await w.runOnce()).toBe(1);
    row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row.next_attempt_at).toBe(new Date(clock + 30_000).toISOString());
    clock += 30_000;
    expect(await w.runOnce()).toBe(1);
    row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'failed',
      attempts: 3,
      next_attempt_at: null,
      last_status_code: 502,
    });
    clock += DAY;
    expect(await w.runOnce()).toBe(0);
    const attempts = await store.db
      .selectFrom('webhook_delivery_attempts')
      .selectAll()
      .orderBy('attempt')
      .execute();
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 502],
      [2, 502],
      [3, 502],
    ]);
  });

  it('waits as long as a 429 Retry-After asks', async () => {
    let n = 0;
    rx.respond(() => (n++ === 0 ? { status: 429, headers: { 'retry-after': '600' } } : 200));
    await subscribe();
    await emit();
    const w = worker({ retryScheduleMs: [5_000] });
    await w.runOnce();
    const row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row.next_attempt_at).toBe(new Date(clock + 600_000).toISOString());
  });

  it('sends again, under the same delivery id, a delivery whose worker died mid-attempt, once its claim expires', async () => {
    await subscribe();
    await emit();
    const lockMs = 60_000;
    const [claimed] = await claimDueDeliveries(store.db, {
      now: new Date(clock).toISOString(),
      lockedUntil: new Date(clock + lockMs).toISOString(),
      limit: 10,
      perEndpoint: 10,
      heldByEndpoint: new Map(),
    });
    expect(claimed).toBeDefined();
    // The claiming worker "crashes" here: it never records anything.
    const w = worker({ lockMs });
    expect(await w.runOnce()).toBe(0);
    clock += lockMs + 1;
    expect(await w.runOnce()).toBe(1);
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.headers['x-service-delivery-id']).toBe(claimed!.id);
    const row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('stop() gives back the claim in flight and the claims waiting, unrecorded, for the next worker', async () => {
    rx.respond(() => ({ status: 200, delayMs: 5_000 }));
    await subscribe();
    for (let i = 0; i < 3; i++) await emit();
    const first = worker({ perEndpointConcurrency: 1, pollMs: 10 });
    first.start();
    await rx.waitFor(1);
    const held = await store.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('claim_token', 'is not', null)
      .execute();
    expect(held).toHaveLength(3); // one running, two claimed and waiting for the endpoint's one slot
    await first.stop();
    const rows = await store.db.selectFrom('webhook_deliveries').selectAll().execute();
    expect(rows.map((r) => [r.status, r.attempts, r.claim_token, r.locked_until])).toEqual([
      ['pending', 0, null, null],
      ['pending', 0, null, null],
      ['pending', 0, null, null],
    ]);
    rx.respond(() => 200);
    const next = worker();
    expect(await next.runOnce()).toBe(3);
    const ids = rx.received.map((r) => r.headers['x-service-delivery-id']);
    expect(ids.slice(1).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(ids.slice(1)).toContain(ids[0]);
  });

  it('two workers sharing the queue never send one delivery twice', async () => {
    rx.respond(() => ({ status: 200, delayMs: 2 }));
    for (let i = 0; i < 4; i++) await subscribe(`/e${i}`);
    for (let i = 0; i < 15; i++) await emit();
    const a = worker({ concurrency: 8, perEndpointConcurrency: 3 });
    const b = worker({ concurrency: 8, perEndpointConcurrency: 3 });
    for (;;) {
      const [x, y] = await Promise.all([a.runOnce(), b.runOnce()]);
      if (x + y === 0) break;
    }
    const ids = rx.received.map((r) => r.headers['x-service-delivery-id']);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
  });

  it('keeps at most perEndpointConcurrency attempts in flight to one endpoint, and the rest flowing', async () => {
    let inFlight = 0;
    let peak = 0;
    // A receiver that counts the requests it is answering at the same time.
    const counting = http.createServer((req, res) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      req.resume();
      setTimeout(() => {
        inFlight -= 1;
        res.end('ok');
      }, 30);
    });
    await new Promise<void>((r) => counting.listen(0, '127.0.0.1', r));
    const port = (counting.address() as { port: number }).port;
    try {
      await endpoints.create(
        tenantId,
        { url: `http://127.0.0.1:${port}/slow`, events: ['product.updated'] },
        actor,
      );
      for (let i = 0; i < 12; i++) await emit();
      const w = worker({ concurrency: 10, perEndpointConcurrency: 3 });
      w.start();
      const deadline = Date.now() + 10_000;
      while (
        (
          await store.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '=', 'delivered')
            .execute()
        ).length < 12
      ) {
        if (Date.now() > deadline) throw new Error('backlog not drained');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(peak).toBe(3);
    } finally {
      counting.closeAllConnections();
      counting.close();
    }
  });
});
