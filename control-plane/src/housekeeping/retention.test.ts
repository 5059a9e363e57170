import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertTenant } from '../tenants/tenants.js';
import { openTestStore, testDialects } from '@dpp/testkit';
import { purgeEndedWork } from './retention.js';

const OLD = '2026-01-01T00:00:00.000Z';
const CUTOFF = '2026-02-01T00:00:00.000Z';
const RECENT = '2026-03-01T00:00:00.000Z';

describe.each(testDialects())('retention purge (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let tenantId: string;
  let endpointId: string;

  beforeEach(async () => {
    store = await openTestStore(dialect);
    endpointId = randomUUID();
    ({ id: tenantId } = await insertTenant(store.db, {
      name: 'T',
      tier: 'free',
      sandbox: false,
      sandboxExpiresAt: null,
    }));
    await store.db
      .insertInto('webhook_endpoints')
      .values({
        id: endpointId,
        tenant_id: tenantId,
        url: 'https://example.com/hook',
        description: null,
        events: '["product.created"]',
        secret: 'whsec_test',
        secret_rotated_at: null,
        enabled: 1,
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        created_at: OLD,
        updated_at: OLD,
      })
      .execute();
  });
  afterEach(() => store?.drop());

  const outboxRow = (processedAt: string | null) =>
    store.db
      .insertInto('outbox')
      .values({
        id: randomUUID(),
        tenant_id: tenantId,
        topic: 'event',
        payload: '{}',
        created_at: OLD,
        available_at: OLD,
        attempts: processedAt ? 1 : 0,
        locked_until: null,
        last_error: null,
        processed_at: processedAt,
      })
      .execute();

  const delivery = async (status: 'delivered' | 'failed' | 'pending', completedAt: string | null) => {
    const id = randomUUID();
    await store.db
      .insertInto('webhook_deliveries')
      .values({
        id,
        tenant_id: tenantId,
        endpoint_id: endpointId,
        event_id: randomUUID(),
        event_type: 'product.created',
        payload: '{}',
        status,
        attempts: 1,
        next_attempt_at: status === 'pending' ? RECENT : null,
        locked_until: null,
        claim_token: null,
        next_trigger: 'schedule',
        last_status_code: status === 'delivered' ? 200 : 500,
        last_error: null,
        created_at: OLD,
        updated_at: completedAt ?? OLD,
        completed_at: completedAt,
      })
      .execute();
    await store.db
      .insertInto('webhook_delivery_attempts')
      .values({
        id: randomUUID(),
        delivery_id: id,
        tenant_id: tenantId,
        attempt: 1,
        attempted_at: OLD,
        status_code: 200,
        error: null,
        duration_ms: 5,
        trigger: 'schedule',
      })
      .execute();
    return id;
  };

  const ingestJob = async (status: 'completed' | 'failed' | 'processing', finishedAt: string | null) => {
    const id = randomUUID();
    await store.db
      .insertInto('ingest_jobs')
      .values({
        id,
        tenant_id: tenantId,
        status,
        format: 'csv',
        idempotency_key: null,
        content_sha256: null,
        bytes: 10,
        total_rows: 1,
        processed_rows: 1,
        created_count: 0,
        failed_count: 1,
        errors_stored: 1,
        error: null,
        actor_type: 'api_key',
        actor_id: null,
        correlation_id: null,
        lease_owner: null,
        locked_until: null,
        attempts: 1,
        created_at: OLD,
        updated_at: finishedAt ?? OLD,
        started_at: OLD,
        finished_at: finishedAt,
      })
      .execute();
    await store.db
      .insertInto('ingest_errors')
      .values({ job_id: id, row: 1, code: 'VALIDATION_ERROR', message: 'bad', field: 'gtin' })
      .execute();
    return id;
  };

  const ids = async (table: 'outbox' | 'webhook_deliveries' | 'ingest_jobs') =>
    (await store.db.selectFrom(table).select('id').execute()).map((r) => r.id).sort();

  it('purges only work that ended before the cut-off, with its children, and leaves pending work alone', async () => {
    await outboxRow(OLD);
    await outboxRow(RECENT);
    await outboxRow(null); // not dispatched yet: however old, it stays
    const oldDelivered = await delivery('delivered', OLD);
    const oldFailed = await delivery('failed', OLD);
    const recentDelivered = await delivery('delivered', RECENT);
    const retrying = await delivery('pending', null);
    const oldCompleted = await ingestJob('completed', OLD);
    const recentFailed = await ingestJob('failed', RECENT);
    const running = await ingestJob('processing', null);

    const report = await purgeEndedWork(store.db, CUTOFF);
    expect(report).toEqual({ outbox: 1, webhookDeliveries: 2, ingestJobs: 1 });

    const outbox = await store.db.selectFrom('outbox').select('processed_at').execute();
    expect(outbox.map((r) => r.processed_at).sort()).toEqual([RECENT, null].sort());
    expect(await ids('webhook_deliveries')).toEqual([recentDelivered, retrying].sort());
    const attempts = await store.db.selectFrom('webhook_delivery_attempts').select('delivery_id').execute();
    expect(attempts.map((a) => a.delivery_id)).not.toContain(oldDelivered);
    expect(attempts.map((a) => a.delivery_id)).not.toContain(oldFailed);
    expect(attempts).toHaveLength(2);
    expect(await ids('ingest_jobs')).toEqual([recentFailed, running].sort());
    const errors = await store.db.selectFrom('ingest_errors').select('job_id').execute();
    expect(errors.map((e) => e.job_id).sort()).toEqual([recentFailed, running].sort());
    expect(errors.map((e) => e.job_id)).not.toContain(oldCompleted);

    // Nothing more to do: a second run purges nothing.
    expect(await purgeEndedWork(store.db, CUTOFF)).toEqual({
      outbox: 0,
      webhookDeliveries: 0,
      ingestJobs: 0,
    });
  });

  it('goes through a backlog larger than one batch', async () => {
    for (let i = 0; i < 2500; i += 500)
      await store.db
        .insertInto('outbox')
        .values(
          Array.from({ length: 500 }, () => ({
            id: randomUUID(),
            tenant_id: tenantId,
            topic: 'event',
            payload: '{}',
            created_at: OLD,
            available_at: OLD,
            attempts: 1,
            locked_until: null,
            last_error: null,
            processed_at: OLD,
          })),
        )
        .execute();
    expect((await purgeEndedWork(store.db, CUTOFF)).outbox).toBe(2500);
    expect(await ids('outbox')).toEqual([]);
  });
});
