import { randomUUID } from 'node:crypto';
import { decodeSgtin96, sgtinPureIdentityUri } from '@dpp/shared';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisSchemaErrors } from '@dpp/testkit/epcis';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { carriersPrintLoop } from './print-loop.js';
import { allocate, createProduct, eventsOf, exportCsv } from '@dpp/testkit/carriers';

const BASE = 'https://id.example.com';

describe.each(testDialects())('carriersPrintLoop, the AIDC port (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let tenantId: string;
  let product: { id: string; gtin: string };
  const port = carriersPrintLoop({ publicBaseUrl: BASE });

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { PUBLIC_BASE_URL: BASE } });
    key = t.tenants.a.admin;
    tenantId = t.tenants.a.id;
    product = await createProduct(t, key, { name: 'Label Printer Test Unit' });
  });
  afterAll(() => t?.close());

  const outcome = (
    serial: string,
    extra: Partial<Parameters<typeof port.confirmPrinted>[1][number]> = {},
  ) => ({
    tenantId,
    gtin: product.gtin,
    serial,
    jobRef: `job_${randomUUID()}`,
    deviceId: 'device-7',
    at: new Date().toISOString(),
    correlationId: 'corr-1',
    ...extra,
  });

  it('finds an allocated serial with the codes of its export row, and nothing else', async () => {
    const { serials } = await allocate(t, key, product.id, 2);
    const db = t.cp.store.db;
    const found = await port.findAllocatedSerial(db, tenantId, product.gtin, serials[1]!);
    const [row] = (await exportCsv(t, key, `productId=${product.id}`)).filter((r) => r.serial === serials[1]);
    expect(found).toEqual({
      productId: product.id,
      productName: 'Label Printer Test Unit',
      gtin: product.gtin,
      serial: serials[1],
      digitalLink: row!.digital_link,
      epc: { scheme: 'sgtin-96', hex: row!.sgtin96_epc },
    });
    expect(decodeSgtin96(found!.epc.hex).serial).toBe(serials[1]);
    expect(await port.findAllocatedSerial(db, tenantId, product.gtin, '999999999')).toBeNull();
    expect(await port.findAllocatedSerial(db, tenantId, '09506000134352', serials[1]!)).toBeNull();
    expect(await port.findAllocatedSerial(db, tenantId, '12345678901234', serials[1]!)).toBeNull();
    expect(await port.findAllocatedSerial(db, t.tenants.b.id, product.gtin, serials[1]!)).toBeNull();
  });

  it("serialsRead: the tenant's rows of the serials a subquery names, counted and registered alike, and no others", async () => {
    const db = t.cp.store.db;
    const [a] = (await allocate(t, key, product.id, 1)).serials;
    const registered = `R-${randomUUID().slice(0, 8)}`;
    const theirs = `T-${randomUUID().slice(0, 8)}`;
    for (const [k, body] of [
      [key, { productId: product.id, serials: [registered] }],
      [t.tenants.b.admin, { productId: (await createProduct(t, t.tenants.b.admin)).id, serials: [theirs] }],
    ] as const) {
      const r = await t.call('POST', '/api/v2/carriers/batch', { key: k, body });
      expect(r.status, r.text).toBe(201);
    }
    // What a batch's seal names: serials of both kinds, one not allocated, a counter serial with a leading zero,
    // one of another tenant's, letters, and more digits than the counter gives.
    const named = [a!, registered, '999999999', `0${a}`, theirs, 'zz', '12345678901234567890'];
    const subquery = named
      .map((s) => db.selectNoFrom(sql<string>`${s}`.as('serial')))
      .reduce((all, one) => all.unionAll(one)) as unknown as Parameters<typeof port.serialsRead>[2];
    const { rows } = await db.executeQuery(port.serialsRead(db, tenantId, subquery));
    const found = (rows as { serial: string; gtin: string; product_id: string }[])
      .map((r) => r.serial)
      .sort();
    expect(found).toEqual([a!, registered].sort());
  });

  it.runIf(dialect === 'postgres')(
    'serialsRead on PostgreSQL probes an index once per serial, however many serials the tenant has and whatever the statistics say',
    async () => {
      const db = t.cp.store.db;
      // Serials allocated since the last ANALYZE (as after a bulk allocation): as a semi-join, the read walked
      // all of the tenant's on the benchmark's floor.
      const { serials } = await allocate(t, key, product.id, 3_000);
      const named = [serials[10]!, serials[2_500]!];
      const subquery = named
        .map((s) => db.selectNoFrom(sql<string>`${s}`.as('serial')))
        .reduce((all, one) => all.unionAll(one)) as unknown as Parameters<typeof port.serialsRead>[2];
      const read = port.serialsRead(db, tenantId, subquery);
      expect((await db.executeQuery(read)).rows.map((r) => (r as { serial: string }).serial).sort()).toEqual(
        [...named].sort(),
      );
      // A planner that finds nested loops costly (as stale statistics can make it) still probes: a LATERAL
      // lookup with a LIMIT can be planned no other way.
      const { rows } = await db.transaction().execute(async (trx) => {
        await sql`set local enable_nestloop = off`.execute(trx);
        return trx.executeQuery<{ 'QUERY PLAN': unknown }>({
          ...read,
          sql: `explain (analyze, format json) ${read.sql}`,
        });
      });
      interface PlanNode {
        'Relation Name'?: string;
        'Actual Rows': number;
        'Actual Loops': number;
        Plans?: PlanNode[];
      }
      const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
      const [{ Plan }] = rows[0]!['QUERY PLAN'] as [{ Plan: PlanNode }];
      const serialRows = nodes(Plan)
        .filter((n) => n['Relation Name'] === 'carrier_serials')
        .map((n) => n['Actual Rows'] * n['Actual Loops']);
      expect(serialRows.length).toBeGreaterThan(0);
      expect(Math.max(...serialRows)).toBeLessThanOrEqual(named.length);
    },
  );

  it('marks a product as in the print loop', async () => {
    const fresh = await createProduct(t, key);
    await t.cp.store.db.transaction().execute((trx) => port.markInPrintLoop(trx, tenantId, fresh.id));
    const read = await t.call('GET', `/api/v2/products/${fresh.id}`, { key });
    expect(read.body.data.inPrintLoop).toBe(true);
  });

  it('confirmPrinted: metadata.print printed, the EPCIS commissioning event and print.confirmed (source aidc)', async () => {
    const [serial] = (await allocate(t, key, product.id, 1)).serials;
    const o = outcome(serial!);
    await t.cp.store.db.transaction().execute((trx) => port.confirmPrinted(trx, [o]));

    const row = await t.cp.store.db
      .selectFrom('carrier_serials')
      .select(['print_status', 'print_reason', 'print_device_id', 'print_reported_at', 'print_source'])
      .where('tenant_id', '=', tenantId)
      .where('serial', '=', serial!)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      print_status: 'printed',
      print_reason: null,
      print_device_id: 'device-7',
      print_reported_at: o.at,
      print_source: 'aidc',
    });
    const [event] = (await eventsOf(t, tenantId, 'print.confirmed')).filter(
      (e) => e.data.jobRef === o.jobRef,
    );
    expect(event!.data).toEqual({
      reportRef: expect.any(String),
      source: 'aidc',
      jobRef: o.jobRef,
      serials: [{ gtin: product.gtin, serial }],
      reportedAt: o.at,
    });
    const epc = sgtinPureIdentityUri(product.gtin, serial!, 7);
    const query = await t.call('GET', `/api/v2/epcis/events?epc=${encodeURIComponent(epc)}`, { key });
    expect(epcisSchemaErrors(query.body)).toEqual([]);
    expect(query.body.epcisBody.queryResults.resultsBody.eventList).toMatchObject([
      { type: 'ObjectEvent', action: 'ADD', bizStep: 'commissioning', disposition: 'active', epcList: [epc] },
    ]);
    const printed = await exportCsv(t, key, `productId=${product.id}&printState=printed`);
    expect(printed.map((r) => r.serial)).toContain(serial);
  });

  const printRow = (serial: string) =>
    t.cp.store.db
      .selectFrom('carrier_serials')
      .select([
        'print_status',
        'print_reason',
        'print_device_id',
        'print_reported_at',
        'print_source',
        'print_report_ref',
      ])
      .where('tenant_id', '=', tenantId)
      .where('serial', '=', serial)
      .executeTakeFirstOrThrow();
  const confirmedOf = async (jobRef: string) =>
    (await eventsOf(t, tenantId, 'print.confirmed')).filter((e) => e.data.jobRef === jobRef);

  it('confirmPrinted: jobs sealed together are each their own report, with their own device and reportRef', async () => {
    const other = await createProduct(t, key, { name: 'Label Printer Test Unit 2' });
    const [a, b] = (await allocate(t, key, product.id, 2)).serials;
    const [c] = (await allocate(t, key, other.id, 1)).serials;
    const registered = `R-${randomUUID().slice(0, 8)}`;
    const reg = await t.call('POST', '/api/v2/carriers/batch', {
      key,
      body: { productId: other.id, serials: [registered] },
    });
    expect(reg.status, reg.text).toBe(201);
    const at = new Date().toISOString();
    const jobs = [
      outcome(b!, { at, deviceId: 'device-1' }),
      outcome(a!, { at, deviceId: 'device-2' }),
      outcome(c!, { at, deviceId: 'device-3', gtin: other.gtin }),
      outcome(registered, { at, deviceId: 'device-4', gtin: other.gtin }),
    ];
    const refs = await t.cp.store.db.transaction().execute((trx) => port.confirmPrinted(trx, jobs));

    const reportRefs = new Set<string>();
    for (const [i, job] of jobs.entries()) {
      const row = await printRow(job.serial);
      expect(row).toEqual({
        print_status: 'printed',
        print_reason: null,
        print_device_id: job.deviceId,
        print_reported_at: at,
        print_source: 'aidc',
        print_report_ref: expect.any(String),
      });
      reportRefs.add(row.print_report_ref!);
      const events = await confirmedOf(job.jobRef);
      expect(events).toHaveLength(1);
      expect(events[0]!.resource_id).toBe(row.print_report_ref);
      expect(events[0]!.data).toEqual({
        reportRef: row.print_report_ref,
        source: 'aidc',
        jobRef: job.jobRef,
        serials: [{ gtin: job.gtin, serial: job.serial }],
        reportedAt: at,
      });
      const epc = sgtinPureIdentityUri(job.gtin, job.serial, 7);
      const query = await t.call('GET', `/api/v2/epcis/events?epc=${encodeURIComponent(epc)}`, { key });
      const eventList = query.body.epcisBody.queryResults.resultsBody.eventList;
      expect(eventList).toMatchObject([{ bizStep: 'commissioning', epcList: [epc] }]);
      expect(refs[i]).toEqual({
        eventId: eventList[0].eventID,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    }
    expect(reportRefs.size).toBe(jobs.length);
  });

  it('confirmPrinted: two jobs of one serial sealed together are applied in order, the later one winning', async () => {
    const [serial] = (await allocate(t, key, product.id, 1)).serials;
    const at = new Date().toISOString();
    const first = outcome(serial!, { at, deviceId: 'device-1' });
    const second = outcome(serial!, { at, deviceId: 'device-2' });
    const refs = await t.cp.store.db
      .transaction()
      .execute((trx) => port.confirmPrinted(trx, [first, second]));
    // The second report finds the serial printed already: it is not commissioned twice.
    expect(refs).toEqual([{ eventId: expect.any(String), sha256: expect.any(String) }, null]);
    const row = await printRow(serial!);
    expect(row).toMatchObject({ print_status: 'printed', print_device_id: 'device-2' });
    const [firstEvent] = await confirmedOf(first.jobRef);
    const [secondEvent] = await confirmedOf(second.jobRef);
    expect(secondEvent!.data.reportRef).toBe(row.print_report_ref);
    expect(firstEvent!.data.reportRef).not.toBe(row.print_report_ref);
  });

  it('confirmFailed: metadata.print failed with the reason; the serial joins the re-print file', async () => {
    const [serial] = (await allocate(t, key, product.id, 1)).serials;
    const o = { ...outcome(serial!), reason: 'retry budget exhausted' };
    await t.cp.store.db.transaction().execute((trx) => port.confirmFailed(trx, o));
    const reprint = await exportCsv(t, key, `productId=${product.id}&printState=failed`);
    expect(reprint.map((r) => r.serial)).toEqual([serial]);
    const [event] = (await eventsOf(t, tenantId, 'print.failed')).filter((e) => e.data.jobRef === o.jobRef);
    expect(event!.data).toEqual({
      reportRef: expect.any(String),
      source: 'aidc',
      jobRef: o.jobRef,
      chunk: 1,
      chunks: 1,
      serials: [{ gtin: product.gtin, serial }],
      failures: [{ serial, gtin: product.gtin, reason: 'retry budget exhausted' }],
      reportedAt: o.at,
    });
    const epc = sgtinPureIdentityUri(product.gtin, serial!, 7);
    const query = await t.call('GET', `/api/v2/epcis/events?epc=${encodeURIComponent(epc)}`, { key });
    expect(query.body.epcisBody.queryResults.resultsBody.eventList).toEqual([]);
  });

  it("writes in the caller's transaction: a rollback leaves no outcome, event or EPCIS record", async () => {
    const [serial] = (await allocate(t, key, product.id, 1)).serials;
    const o = outcome(serial!);
    await expect(
      t.cp.store.db.transaction().execute(async (trx) => {
        await port.confirmPrinted(trx, [o]);
        throw new Error('the job transition failed');
      }),
    ).rejects.toThrow('the job transition failed');
    const row = await t.cp.store.db
      .selectFrom('carrier_serials')
      .select('print_status')
      .where('tenant_id', '=', tenantId)
      .where('serial', '=', serial!)
      .executeTakeFirstOrThrow();
    expect(row.print_status).toBeNull();
    expect(
      (await eventsOf(t, tenantId, 'print.confirmed')).filter((e) => e.data.jobRef === o.jobRef),
    ).toEqual([]);
    const epc = sgtinPureIdentityUri(product.gtin, serial!, 7);
    const query = await t.call('GET', `/api/v2/epcis/events?epc=${encodeURIComponent(epc)}`, { key });
    expect(query.body.epcisBody.queryResults.resultsBody.eventList).toEqual([]);
  });

  it('refuses to confirm a serial that was never allocated, naming it among the jobs sealed with it', async () => {
    await expect(
      t.cp.store.db.transaction().execute((trx) => port.confirmPrinted(trx, [outcome('999999999')])),
    ).rejects.toThrow(/not allocated/);
    const [a, b] = (await allocate(t, key, product.id, 2)).serials;
    const at = new Date().toISOString();
    const jobs = [outcome(a!, { at }), outcome('999999998', { at }), outcome(b!, { at })];
    await expect(
      t.cp.store.db.transaction().execute((trx) => port.confirmPrinted(trx, jobs)),
    ).rejects.toThrow(`serial 999999998 of GTIN ${product.gtin} is not allocated in tenant ${tenantId}`);
    expect((await printRow(a!)).print_status).toBeNull();
    expect((await printRow(b!)).print_status).toBeNull();
  });
});
