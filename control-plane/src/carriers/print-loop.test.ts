import { randomUUID } from 'node:crypto';
import { decodeSgtin96, sgtinPureIdentityUri } from '@dpp/shared';
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

  it('refuses to confirm a serial that was never allocated', async () => {
    await expect(
      t.cp.store.db.transaction().execute((trx) => port.confirmPrinted(trx, [outcome('999999999')])),
    ).rejects.toThrow(/not allocated/);
  });
});
