/**
 * On PostgreSQL a claim's statement commits without waiting for the WAL flush (aidc/claim.ts, ASYNC_COMMIT):
 * only that statement's own transaction, never the connection's next one, and a claim whose attempt the
 * database does not know is refused at the send gate, before any byte is sent.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HttpPrintDevice,
  enrollTestDevice,
  postgresAvailable,
  printableProduct,
  startTestControlPlane,
  type TestControlPlane,
} from '@dpp/testkit';

type Query = (...args: unknown[]) => unknown;

/** The text of every statement the control plane's pool sends while `fn` runs. */
async function statementsSentBy(fn: () => Promise<void>): Promise<string[]> {
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  const texts: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    if (typeof first === 'string') texts.push(first);
    else if (first && typeof (first as { text?: unknown }).text === 'string')
      texts.push((first as { text: string }).text);
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return texts;
}

describe.runIf(postgresAvailable())('a claim commits without waiting for the WAL flush (postgres)', () => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => {
    // Two connections: the checks below read the setting on both, so the claim's own is among them.
    t = await startTestControlPlane({ dialect: 'postgres', env: { DATABASE_POOL_SIZE: '2' } });
    admin = t.tenants.a.admin;
    dev = await new HttpPrintDevice(
      t.call,
      await enrollTestDevice(t, admin, { printerNames: ['zebra-1'] }),
    ).init();
  });
  afterAll(() => t?.close());

  /** `synchronous_commit` as each of the pool's two connections has it, both held at once. */
  const settingOnEachConnection = () =>
    Promise.all(
      [0, 1].map(() =>
        t.cp.store.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{
            v: string;
          }>`select current_setting('synchronous_commit') as v`.execute(trx);
          await sql`select pg_sleep(0.05)`.execute(trx);
          return rows[0]!.v;
        }),
      ),
    );

  it("sets synchronous_commit off in the claim's own statement, and the connection commits as configured after it", async () => {
    const before = await settingOnEachConnection();
    expect(before[0]).toBe(before[1]);
    expect(before[0]).not.toBe('off');
    const p = await printableProduct(t.call, admin, 2);
    for (const serial of p.serials) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } });
      expect(r.status).toBe(201);
    }
    let claimed: Awaited<ReturnType<HttpPrintDevice['claimMany']>> = [];
    const texts = await statementsSentBy(async () => {
      claimed = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    });
    expect(claimed).toHaveLength(2);
    const claims = texts.filter((text) => /insert into print_attempts/.test(text));
    expect(claims).toHaveLength(1);
    expect(claims[0]).toContain("set_config('synchronous_commit', 'off', true)");
    // Transaction-local: no connection of the pool keeps it for the results that follow.
    expect(await settingOnEachConnection()).toEqual(before);
    // The claims stand like any other: the send gate and the results run on them.
    const [first] = claimed;
    const gate = await t.call('POST', `/api/v2/aidc/jobs/${first!.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: first!.attemptId, sending: true },
    });
    expect(gate.status).toBe(200);
  });

  it('refuses the send gate to an attempt the database does not know (a claim a crash lost)', async () => {
    const p = await printableProduct(t.call, admin, 1);
    const r = await t.call('POST', '/api/v2/aidc/jobs', {
      key: admin,
      body: { gtin: p.gtin, serial: p.serials[0] },
    });
    expect(r.status).toBe(201);
    const [c] = await dev.claimMany([{ name: 'zebra-1' }]);
    expect(c).toBeDefined();
    // What the database holds after a crash lost the claim's commit: the job queued, its attempt unknown.
    await t.cp.store.db.deleteFrom('print_attempts').where('attempt_id', '=', c!.attemptId).execute();
    await t.cp.store.db
      .updateTable('print_jobs')
      .set({ state: 'QUEUED', attempt_id: null, lease_expires_at: null, device_id: null, attempt_count: 0 })
      .where('job_ref', '=', c!.jobRef)
      .execute();
    const gate = await t.call('POST', `/api/v2/aidc/jobs/${c!.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: c!.attemptId, sending: true },
    });
    // To this device the job now holds no attempt of its own: the spec's plain 404, as for any job it never
    // attempted. Only a 200 lets a device send, and a 404 tells it to stop (docs/device-protocol.md).
    expect(gate.status).toBe(404);
    const [again] = await dev.claimMany([{ name: 'zebra-1' }]);
    expect(again!.jobRef).toBe(c!.jobRef);
    expect(again!.attemptId).not.toBe(c!.attemptId);
  });
});
