/** Test support shared by the webhook suites: emitting events as an emitter would, fast tuning. */
import type { EventType } from '@dpp/shared';
import { type DeliveryTuning, recordEvent } from '@dpp/control-plane';
import type { TestControlPlane } from './index.js';

/** Retries in tens of milliseconds instead of seconds to days, so retry tests run fast. */
export const FAST_TUNING: Partial<DeliveryTuning> = {
  retryScheduleMs: [60, 60, 60],
  jitterRatio: 0,
  timeoutMs: 400,
  pollMs: 50,
  concurrency: 8,
  perEndpointConcurrency: 2,
};

/** Records an event in its own transaction, exactly as a domain emitter does, and wakes the outbox. */
export async function emitEvent(
  t: TestControlPlane,
  tenantId: string,
  type: EventType,
  data: Record<string, unknown>,
): Promise<string> {
  const id = await t.cp.store.db
    .transaction()
    .execute((trx) => recordEvent(trx, { tenantId, type, resource: { type: 'test', id: 'r1' }, data }));
  t.cp.dispatcher.wake();
  return id;
}

/** Polls until `check` returns a value (not undefined) or throws after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
export * from './webhook-receiver.js';
