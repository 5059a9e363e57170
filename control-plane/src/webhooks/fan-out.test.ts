import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventType } from '@dpp/shared';
import { recordEvent } from '../events/index.js';
import { OutboxDispatcher, enqueueOutbox, outboxRowOf } from '../outbox/index.js';
import { SecretBox } from '../store/index.js';
import { insertTenant } from '../tenants/tenants.js';
import { openTestStore, testDialects } from '@dpp/testkit';
import { WebhookEndpoints } from './endpoints.js';
import { webhookFanOut } from './fan-out.js';
import { WebhookUrlPolicy } from './url-policy.js';

const log = pino({ level: 'silent' });
const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const actor = { actor: { type: 'system' as const, id: 'test' } };

describe.each(testDialects())('webhook fan-out of a dispatcher pass (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let clock: number;
  let endpoints: WebhookEndpoints;

  beforeEach(async () => {
    store = await openTestStore(dialect);
    clock = T0;
    endpoints = new WebhookEndpoints({
      db: store.db,
      secrets: SecretBox.of(undefined),
      policy: new WebhookUrlPolicy({ allowPrivateNetworks: true }),
      now: () => clock,
    });
  });
  afterEach(() => store.drop());

  const tenant = async (name: string) =>
    (await insertTenant(store.db, { name, tier: 'free', sandbox: false, sandboxExpiresAt: null })).id;
  const subscribe = async (tenantId: string, events: EventType[], at: number) => {
    clock = at;
    return (await endpoints.create(tenantId, { url: 'http://127.0.0.1:9/hook', events }, actor)).id;
  };
  const emit = (tenantId: string, type: EventType, at: number) =>
    recordEvent(store.db, { tenantId, type, data: { at }, occurredAt: new Date(at).toISOString() });
  const deliveries = async () =>
    (
      await store.db
        .selectFrom('webhook_deliveries')
        .select(['endpoint_id', 'event_id', 'event_type', 'tenant_id', 'payload'])
        .execute()
    )
      .map((d) => ({ ...d, payload: JSON.parse(d.payload) as { id: string; type: string } }))
      .sort((a, b) => `${a.event_id}${a.endpoint_id}`.localeCompare(`${b.event_id}${b.endpoint_id}`));

  /**
   * Two tenants' endpoints created at different times with different subscriptions, and events of both
   * tenants in one outbox pass: each event goes to exactly the endpoints of its tenant that subscribe to its
   * type and existed when it occurred, as when each row is handled alone.
   */
  async function scenario() {
    const a = await tenant('A');
    const b = await tenant('B');
    const aUpdated = await subscribe(a, ['product.updated'], T0);
    const aCreated = await subscribe(a, ['product.created', 'product.updated'], T0 + HOUR);
    const bUpdated = await subscribe(b, ['product.updated'], T0);
    await subscribe(b, ['product.created'], T0 + 3 * HOUR); // after every event: receives none
    const early = await emit(a, 'product.updated', T0 + HOUR / 2);
    const late = await emit(a, 'product.updated', T0 + 2 * HOUR);
    const created = await emit(a, 'product.created', T0 + 2 * HOUR);
    const other = await emit(b, 'product.updated', T0 + 2 * HOUR);
    const unheard = await emit(b, 'product.deleted', T0 + 2 * HOUR);
    await enqueueOutbox(store.db, { topic: 'event', tenantId: a, payload: { not: 'an event' } });
    return {
      expected: [
        [early, aUpdated],
        [late, aUpdated],
        [late, aCreated],
        [created, aCreated],
        [other, bUpdated],
      ]
        .map(([event, endpoint]) => ({ event, endpoint }))
        .sort((x, y) => `${x.event}${x.endpoint}`.localeCompare(`${y.event}${y.endpoint}`)),
      unheard,
    };
  }

  it('queues each event of a pass to the endpoints of its own tenant, type and time', async () => {
    const { expected, unheard } = await scenario();
    const dispatcher = new OutboxDispatcher({ db: store.db, dialect: store.dialect, log });
    let queued = 0;
    dispatcher.register(
      'event',
      webhookFanOut({ db: store.db, log, now: () => clock, onQueued: () => queued++ }),
    );
    expect(await dispatcher.drainOnce()).toBe(6);
    expect(queued).toBe(1);
    const got = await deliveries();
    expect(got.map((d) => ({ event: d.event_id, endpoint: d.endpoint_id }))).toEqual(expected);
    for (const d of got) {
      expect(d.payload).toMatchObject({ id: d.event_id, type: d.event_type });
    }
    expect(got.some((d) => d.event_id === unheard)).toBe(false);
    // Every row is done, the malformed one skipped: a second pass finds nothing.
    expect(await dispatcher.drainOnce()).toBe(0);
  });

  it('queues the same deliveries when each row is handled alone, and nothing new when a row comes again', async () => {
    const { expected } = await scenario();
    const fanOut = webhookFanOut({ db: store.db, log, now: () => clock });
    const rows = await store.db.selectFrom('outbox').selectAll().orderBy('created_at').execute();
    for (const r of rows) await fanOut.one(outboxRowOf(r));
    expect((await deliveries()).map((d) => ({ event: d.event_id, endpoint: d.endpoint_id }))).toEqual(
      expected,
    );
    await fanOut.many(rows.map(outboxRowOf));
    expect(await deliveries()).toHaveLength(expected.length);
  });
});
