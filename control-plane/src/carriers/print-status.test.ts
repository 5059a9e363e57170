import { randomUUID } from 'node:crypto';
import { sgtinPureIdentityUri } from '@dpp/shared';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisSchemaErrors } from '@dpp/testkit/epcis';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { allocate, createProduct, eventsOf, exportCsv } from '@dpp/testkit/carriers';

const PRINT_STATUS = '/api/v2/carriers/print-status';

interface Result {
  serial: string;
  status: 'printed' | 'failed';
  reason?: string;
  deviceId?: string;
  gtin?: string;
}

describe.each(testDialects())('POST /carriers/print-status (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let tenantId: string;
  let product: { id: string; gtin: string };

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    key = t.tenants.a.admin;
    tenantId = t.tenants.a.id;
    product = await createProduct(t, key);
  });
  afterAll(() => t?.close());

  const report = (results: Result[], k = key) => t.call('POST', PRINT_STATUS, { key: k, body: { results } });
  const serialsOf = async (n: number) => (await allocate(t, key, product.id, n)).serials;
  const printRow = (serial: string) =>
    t.cp.store.db
      .selectFrom('carrier_serials')
      .select(['print_status', 'print_reason', 'print_device_id', 'print_reported_at', 'print_source'])
      .where('tenant_id', '=', tenantId)
      .where('serial', '=', serial)
      .executeTakeFirstOrThrow();
  const printEventCount = async () =>
    (await eventsOf(t, tenantId, 'print.confirmed')).length +
    (await eventsOf(t, tenantId, 'print.failed')).length;

  it('rule 1: replaces metadata.print wholesale; the last result for a serial wins within a request', async () => {
    const [a, b] = await serialsOf(2);
    const first = await report([{ serial: a!, status: 'failed', reason: 'ribbon out', deviceId: 'zt-1' }]);
    expect(first.status).toBe(200);
    expect(await printRow(a!)).toEqual({
      print_status: 'failed',
      print_reason: 'ribbon out',
      print_device_id: 'zt-1',
      print_reported_at: first.body.reportedAt,
      print_source: 'print-status',
    });
    // No reason or device this time: the earlier ones do not survive.
    const second = await report([{ serial: a!, status: 'printed' }]);
    expect(await printRow(a!)).toEqual({
      print_status: 'printed',
      print_reason: null,
      print_device_id: null,
      print_reported_at: second.body.reportedAt,
      print_source: 'print-status',
    });

    const within = await report([
      { serial: b!, status: 'printed', deviceId: 'zt-2' },
      { serial: a!, status: 'printed' },
      { serial: b!, status: 'failed', reason: 'smudged' },
    ]);
    expect(within.status).toBe(200);
    expect(within.body).toMatchObject({ updated: [b, a], printed: [a], failed: [b], unknown: [] });
    expect(await printRow(b!)).toMatchObject({
      print_status: 'failed',
      print_reason: 'smudged',
      print_device_id: null,
    });
    const [failedEvent] = (await eventsOf(t, tenantId, 'print.failed')).filter(
      (e) => e.data.reportRef === within.body.reportRef,
    );
    expect(failedEvent!.data.failures).toEqual([{ serial: b, gtin: product.gtin, reason: 'smudged' }]);
  });

  it('rule 1: serials of one outcome printed on different devices each keep their own device', async () => {
    const [a, b, c] = await serialsOf(3);
    const res = await report([
      { serial: a!, status: 'printed', deviceId: 'zt-1' },
      { serial: b!, status: 'printed' },
      { serial: c!, status: 'printed', deviceId: 'zt-3' },
    ]);
    expect(res.status).toBe(200);
    for (const [serial, device] of [
      [a, 'zt-1'],
      [b, null],
      [c, 'zt-3'],
    ] as const) {
      expect(await printRow(serial!)).toEqual({
        print_status: 'printed',
        print_reason: null,
        print_device_id: device,
        print_reported_at: res.body.reportedAt,
        print_source: 'print-status',
      });
    }
  });

  it('rule 2: an identical batch replays the first answer and queues nothing; a changed one executes', async () => {
    const [a, b] = await serialsOf(2);
    const batch: Result[] = [
      { serial: a!, status: 'printed', deviceId: 'zt-1' },
      { serial: b!, status: 'failed', reason: 'jam' },
    ];
    const first = await report(batch);
    expect(first.status).toBe(200);
    const events = await printEventCount();
    const outbox = await t.cp.store.db.selectFrom('outbox').select('id').execute();
    const epcis = await t.cp.store.db.selectFrom('epcis_events').select('id').execute();

    const again = await report(batch);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await printEventCount()).toBe(events);
    expect(await t.cp.store.db.selectFrom('outbox').select('id').execute()).toHaveLength(outbox.length);
    expect(await t.cp.store.db.selectFrom('epcis_events').select('id').execute()).toHaveLength(epcis.length);
    expect((await printRow(a!)).print_reported_at).toBe(first.body.reportedAt);

    const changed = await report([batch[0]!, { ...batch[1]!, reason: 'jam at the peeler' }]);
    expect(changed.status).toBe(200);
    expect(changed.body.reportRef).not.toBe(first.body.reportRef);
    expect(changed.headers.get('idempotent-replayed')).toBeNull();
    expect(await printEventCount()).toBe(events + 2);
    expect((await printRow(b!)).print_reason).toBe('jam at the peeler');
  });

  it('rule 2: concurrent identical batches execute once', async () => {
    const serials = await serialsOf(20);
    const batch: Result[] = serials.map((serial) => ({ serial, status: 'failed', reason: 'no media' }));
    const before = await printEventCount();
    const answers = await Promise.all(Array.from({ length: 4 }, () => report(batch)));
    for (const a of answers) expect(a.status, a.text).toBe(200);
    expect(new Set(answers.map((a) => a.body.reportRef)).size).toBe(1);
    expect(await printEventCount()).toBe(before + 1);
  });

  it('rule 3: unknown serials are listed with 200 and the known ones commit', async () => {
    const [a, b] = await serialsOf(2);
    const theirs = await createProduct(t, t.tenants.b.admin);
    const [foreign] = (await allocate(t, t.tenants.b.admin, theirs.id, 1)).serials;
    const res = await report([
      { serial: a!, status: 'printed' },
      { serial: '999999999', status: 'printed' },
      { serial: 'ABC-1', status: 'failed' },
      { serial: '0', status: 'failed' },
      { serial: b!, status: 'printed', gtin: theirs.gtin },
      // Serials are per workspace: theirs is unknown here (under its GTIN), and never touched.
      { serial: foreign!, status: 'failed', reason: 'jam', gtin: theirs.gtin },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.updated).toEqual([a]);
    expect(res.body.printed).toEqual([a]);
    expect(res.body.failed).toEqual([]);
    expect(res.body.unknown.sort()).toEqual(['0', '999999999', 'ABC-1', b, foreign].sort());
    expect((await printRow(a!)).print_status).toBe('printed');
    expect((await printRow(b!)).print_status).toBeNull();
    const theirRow = await t.cp.store.db
      .selectFrom('carrier_serials')
      .select('print_status')
      .where('tenant_id', '=', t.tenants.b.id)
      .where('serial', '=', foreign!)
      .executeTakeFirstOrThrow();
    expect(theirRow.print_status).toBeNull();
    // A result may carry the GTIN to double-check: the right one (in any GTIN length) is accepted.
    const checked = await report([{ serial: b!, status: 'printed', gtin: product.gtin }]);
    expect(checked.body.updated).toEqual([b]);
  });

  it('rule 4: one print.confirmed, print.failed split in chunks of 250 sharing the reportRef', async () => {
    const serials = await serialsOf(610);
    const printed = serials.slice(0, 10);
    const failed = serials.slice(10);
    const res = await report([
      ...printed.map((serial): Result => ({ serial, status: 'printed', deviceId: 'zt-9' })),
      ...failed.map((serial, i): Result => ({ serial, status: 'failed', reason: `fault ${i % 3}` })),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual([
      { type: 'print.confirmed', dispatch: 'queued' },
      { type: 'print.failed', dispatch: 'queued', chunks: 3 },
    ]);
    const ref = res.body.reportRef as string;
    expect(typeof ref).toBe('string');
    const confirmed = (await eventsOf(t, tenantId, 'print.confirmed')).filter(
      (e) => e.data.reportRef === ref,
    );
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]!.data).toEqual({
      reportRef: ref,
      source: 'print-status',
      serials: printed.map((serial) => ({ gtin: product.gtin, serial })),
      reportedAt: res.body.reportedAt,
    });
    const chunks = (await eventsOf(t, tenantId, 'print.failed'))
      .filter((e) => e.data.reportRef === ref)
      .sort((x, y) => Number(x.data.chunk) - Number(y.data.chunk));
    expect(chunks.map((c) => [c.data.chunk, c.data.chunks])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(chunks.map((c) => (c.data.failures as unknown[]).length)).toEqual([250, 250, 100]);
    const failures = chunks.flatMap(
      (c) => c.data.failures as { serial: string; gtin: string; reason: string }[],
    );
    expect(failures).toEqual(
      failed.map((serial, i) => ({ serial, gtin: product.gtin, reason: `fault ${i % 3}` })),
    );
    expect(chunks.flatMap((c) => c.data.serials as unknown[])).toEqual(
      failed.map((serial) => ({ gtin: product.gtin, serial })),
    );
    expect(
      chunks.every((c) => c.data.source === 'print-status' && c.data.reportedAt === res.body.reportedAt),
    ).toBe(true);
    // Only printed serials: no print.failed entry at all.
    const onlyPrinted = await report([{ serial: failed[0]!, status: 'printed' }]);
    expect(onlyPrinted.body.events).toEqual([{ type: 'print.confirmed', dispatch: 'queued' }]);
  });

  it('rule 5: a failure to queue the events never fails the call; the outcomes commit', async () => {
    const [a, b] = await serialsOf(2);
    const db = t.cp.store.db;
    if (dialect === 'postgres') {
      await sql`create or replace function fail_print_events() returns trigger language plpgsql as $$
        begin raise exception 'simulated queue failure'; end $$`.execute(db);
      await sql`create trigger fail_print_events before insert on events for each row
        when (new.type like 'print.%') execute function fail_print_events()`.execute(db);
    } else {
      await sql`create trigger fail_print_events before insert on events when new.type like 'print.%'
        begin select raise(abort, 'simulated queue failure'); end`.execute(db);
    }
    const before = await printEventCount();
    let res;
    try {
      res = await report([
        { serial: a!, status: 'printed' },
        { serial: b!, status: 'failed', reason: 'jam' },
      ]);
    } finally {
      await sql`drop trigger fail_print_events${sql.raw(dialect === 'postgres' ? ' on events' : '')}`.execute(
        db,
      );
    }
    expect(res.status, res.text).toBe(200);
    expect(res.body.events).toEqual([
      { type: 'print.confirmed', dispatch: 'queue_failed' },
      { type: 'print.failed', dispatch: 'queue_failed', chunks: 1 },
    ]);
    expect(await printEventCount()).toBe(before);
    expect((await printRow(a!)).print_status).toBe('printed');
    expect((await printRow(b!)).print_status).toBe('failed');
    const failedFile = await exportCsv(t, key, `productId=${product.id}&printState=failed`);
    expect(failedFile.map((r) => r.serial)).toContain(b);
    // The identical batch replays the first answer (events[] describes the original call).
    const again = await report([
      { serial: a!, status: 'printed' },
      { serial: b!, status: 'failed', reason: 'jam' },
    ]);
    expect(again.body).toEqual(res.body);
  });

  it('records one EPCIS commissioning ObjectEvent per report for newly printed serials, schema-valid', async () => {
    const serials = await serialsOf(3);
    const res = await report(serials.map((serial): Result => ({ serial, status: 'printed' })));
    const epcs = serials.map((s) => sgtinPureIdentityUri(product.gtin, s, 7));
    const query = await t.call(
      'GET',
      `/api/v2/epcis/events?bizStep=commissioning&epc=${encodeURIComponent(epcs[1]!)}`,
      {
        key,
      },
    );
    expect(query.status).toBe(200);
    expect(epcisSchemaErrors(query.body)).toEqual([]);
    const list = query.body.epcisBody.queryResults.resultsBody.eventList;
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual({
      type: 'ObjectEvent',
      eventTime: res.body.reportedAt,
      eventTimeZoneOffset: '+00:00',
      epcList: epcs,
      action: 'ADD',
      bizStep: 'commissioning',
      disposition: 'active',
      eventID: expect.stringMatching(/^urn:uuid:/),
      recordTime: res.body.reportedAt,
    });
    // Reported printed again (another device): confirmed again, but not commissioned twice.
    const again = await report([{ serial: serials[1]!, status: 'printed', deviceId: 'zt-2' }]);
    expect(again.body.events).toEqual([{ type: 'print.confirmed', dispatch: 'queued' }]);
    const after = await t.call('GET', `/api/v2/epcis/events?epc=${encodeURIComponent(epcs[1]!)}`, { key });
    expect(after.body.epcisBody.queryResults.resultsBody.eventList).toHaveLength(1);
    // A failed serial is not commissioned.
    const [f] = await serialsOf(1);
    await report([{ serial: f!, status: 'failed', reason: 'jam' }]);
    const none = await t.call(
      'GET',
      `/api/v2/epcis/events?epc=${encodeURIComponent(sgtinPureIdentityUri(product.gtin, f!, 7))}`,
      {
        key,
      },
    );
    expect(none.body.epcisBody.queryResults.resultsBody.eventList).toEqual([]);
  });

  it('commissions a serial once when several reports of it as printed arrive at the same moment', async () => {
    // Different devices, so each report is its own batch (no idempotent replay between them). Before the
    // serial rows were locked, each transaction read the serial as not yet printed and commissioned it.
    for (let round = 0; round < 3; round++) {
      const [serial, other] = await serialsOf(2);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          report([
            { serial: other!, status: 'printed', deviceId: `zt-${i}` },
            { serial: serial!, status: 'printed', deviceId: `zt-${i}` },
          ]),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      for (const s of [serial!, other!]) {
        const epc = encodeURIComponent(sgtinPureIdentityUri(product.gtin, s, 7));
        const events = await t.call('GET', `/api/v2/epcis/events?bizStep=commissioning&epc=${epc}`, { key });
        expect(events.body.epcisBody.queryResults.resultsBody.eventList).toHaveLength(1);
      }
    }
  });
  it('takes at most 1,000 results and validates each', async () => {
    const many = Array.from({ length: 1_001 }, (_, i): Result => ({
      serial: String(i + 1),
      status: 'printed',
    }));
    const tooMany = await report(many);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('VALIDATION_ERROR');
    expect(tooMany.body.error.details.field).toBe('results');
    const thousand = await report(many.slice(0, 1_000).map((r) => ({ ...r, serial: `X${r.serial}` })));
    expect(thousand.status).toBe(200);
    expect(thousand.body.unknown).toHaveLength(1_000);
    for (const [body, field] of [
      [{ results: [] }, 'results'],
      [{ results: [{ serial: '1', status: 'done' }] }, 'results[0].status'],
      [{ results: [{ serial: '', status: 'printed' }] }, 'results[0].serial'],
      [{ results: [{ serial: '1', status: 'printed', gtin: '12345678901234' }] }, 'results[0].gtin'],
      [{ results: [{ serial: '1', status: 'printed', colour: 'red' }] }, 'results[0]'],
    ] as const) {
      const res = await t.call('POST', PRINT_STATUS, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('accepts epcis:capture or production:create', async () => {
    const denied = await report([{ serial: '1', status: 'printed' }], t.tenants.a.readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('API_SCOPE_DENIED');
    expect(denied.body.error.details.required).toMatch(/epcis:capture/);
  });

  it('replays a client Idempotency-Key too', async () => {
    const [a] = await serialsOf(1);
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = { results: [{ serial: a!, status: 'printed' }] };
    const first = await t.call('POST', PRINT_STATUS, { key, headers, body });
    const again = await t.call('POST', PRINT_STATUS, { key, headers, body });
    expect(again.body).toEqual(first.body);
    const other = await t.call('POST', PRINT_STATUS, {
      key,
      headers,
      body: { results: [{ serial: a!, status: 'failed' }] },
    });
    expect(other.status).toBe(409);
  });
});
